package target

import (
	"context"
	"fmt"
	"os"

	"github.com/benchrig/benchrig/internal/proc"
)

// Target is a server under measurement: one started by Start or one already
// running that Attach found. The sampler takes its PID.
type Target interface {
	// PID is the server's (leader) process ID.
	PID() int
	// Alive reports whether the server still runs.
	Alive() bool
	// Stop ends the server if benchrig started it; it is a no-op otherwise.
	Stop(ctx context.Context) error
}

var (
	_ Target = (*Process)(nil)
	_ Target = (*Attached)(nil)
)

// Attached is a server benchrig measures but did not start and does not
// stop, identified by its PID.
type Attached struct {
	fs    proc.FS
	pid   int
	comm  string
	start uint64 // start time in clock ticks, to tell a reused PID apart
}

// Attach returns a handle on the running process pid, after checking that it
// exists, has not exited, and is neither benchrig nor one of its ancestors
// (PID 1, the shell that runs benchrig): the tree of such a process holds
// benchrig, whose load and own CPU it would count (and on a busy machine,
// PID 1's tree is every process, read at every sampler tick).
func Attach(pid int) (*Attached, error) {
	return attach(proc.Default(), pid)
}

// attach is Attach reading the process filesystem fs.
func attach(fs proc.FS, pid int) (*Attached, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("attach to pid %d: want a positive process ID", pid)
	}
	st, err := fs.Stat(pid)
	if proc.Vanished(err) {
		return nil, fmt.Errorf("attach to pid %d: no such process (or not visible in this PID namespace)", pid)
	}
	if err != nil {
		return nil, fmt.Errorf("attach to pid %d: %w", pid, err)
	}
	if st.Exited() {
		return nil, fmt.Errorf("attach to pid %d (%s): process has exited (zombie)", pid, st.Comm)
	}
	if holdsSelf(fs, pid) {
		return nil, fmt.Errorf("attach to pid %d (%s): benchrig itself runs in its process tree (it is benchrig or one of its ancestors), so its figures would count benchrig's own load and CPU: give the server's own PID, or --attach-port", pid, st.Comm)
	}
	return &Attached{fs: fs, pid: pid, comm: st.Comm, start: st.StartTime}, nil
}

// maxAncestry bounds the walk up benchrig's ancestry.
const maxAncestry = 4096

// holdsSelf reports whether pid is this process or one of its ancestors,
// walking up the parent chain in fs (false when it cannot be read).
func holdsSelf(fs proc.FS, pid int) bool {
	p := os.Getpid()
	for i := 0; i < maxAncestry && p > 0; i++ {
		if p == pid {
			return true
		}
		st, err := fs.Stat(p)
		if err != nil {
			return false
		}
		p = st.PPID
	}
	return false
}

// PID is the attached process ID.
func (a *Attached) PID() int { return a.pid }

// Comm is the process's command name as the kernel reports it at attach
// time (at most 15 bytes).
func (a *Attached) Comm() string { return a.comm }

// Alive reports whether the attached process still runs: the PID exists, is
// not a zombie, and is the same process (same start time) as at Attach.
func (a *Attached) Alive() bool {
	return a.fs.SameProcess(a.pid, a.start)
}

// Stop does nothing: benchrig does not stop servers it did not start.
func (a *Attached) Stop(context.Context) error { return nil }
