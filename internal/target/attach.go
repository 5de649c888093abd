package target

import (
	"context"
	"fmt"

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
// exists and has not exited.
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
	return &Attached{fs: fs, pid: pid, comm: st.Comm, start: st.StartTime}, nil
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
