package load

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// checkFDs refuses a connection count the file-descriptor limit cannot take,
// before any is opened, saying how to raise the limit. (Go raises the soft
// limit to the hard one at start; a shell's `ulimit -n` raises the hard one
// when run as a user that may.)
func checkFDs(conns int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil // no limit known: the opens say what fails
	}
	open := 0
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		open = len(fds)
	}
	need := uint64(conns + open + fdSpare)
	if need <= lim.Cur {
		return nil
	}
	return fmt.Errorf("%d connections need about %d file descriptors (%d open, %d spare), over the limit of %d (RLIMIT_NOFILE); raise it with `ulimit -n %d` in the shell that starts benchrig (hard limit %d), or use fewer connections",
		conns, need, open, fdSpare, lim.Cur, need, lim.Max)
}

// fdHint explains a "too many open files" error of opening connections.
func fdHint(err error, conns int) string {
	if !errors.Is(err, syscall.EMFILE) && !errors.Is(err, syscall.ENFILE) {
		return ""
	}
	return fmt.Sprintf(" (out of file descriptors: %d connections need at least %d; raise the limit with `ulimit -n`, or use fewer connections)", conns, conns+fdSpare)
}
