package result

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/proc"
)

// ErrLocked matches, with errors.Is, the error of a writer refused because
// another process is writing the same results file.
var ErrLocked = errors.New("results file is locked by another writer")

// LockedError is the error of Create or Resume when another process holds
// the results file's lock: two writers would interleave their lines and
// corrupt it.
type LockedError struct {
	// Path is the results file.
	Path string
	// PIDs are the processes holding the lock, as /proc/locks shows them;
	// empty when the holder is not visible here (another PID namespace).
	PIDs []int
}

// Error names the file and the holder.
func (e *LockedError) Error() string {
	who := "another process (not visible here: another PID namespace?)"
	if len(e.PIDs) > 0 {
		ids := make([]string, len(e.PIDs))
		for i, p := range e.PIDs {
			ids[i] = strconv.Itoa(p)
		}
		who = "process " + strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s is being written by %s, which holds its lock: wait for that run to end or stop it; a second writer would corrupt the file", e.Path, who)
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// lockWriter takes an exclusive flock on the open results file f, without
// waiting. Every writer (Create, Resume) takes it before changing a byte;
// readers (ReadFile, verify, report) do not need it. The kernel releases it
// when the file is closed or the process dies, kill -9 included, so a
// killed run leaves nothing to clean.
func lockWriter(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EWOULDBLOCK) {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return &LockedError{Path: f.Name(), PIDs: lockHolders(f)}
}

// lockHolders finds in /proc/locks the processes holding a lock on f.
func lockHolders(f *os.File) []int {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return nil
	}
	pids, err := proc.Default().LockHolders(unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	if err != nil {
		return nil
	}
	self := os.Getpid()
	out := pids[:0]
	for _, p := range pids {
		if p != self {
			out = append(out, p)
		}
	}
	return out
}
