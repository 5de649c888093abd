package pgephemeral

import (
	"syscall"
	"time"

	"github.com/benchrig/benchrig/internal/proc"
)

// descendants returns the PIDs of every live descendant of pid (PostgreSQL's
// backends and auxiliary processes), read from fs; nil when the process
// table cannot be read.
func descendants(fs proc.FS, pid int) []int {
	ds, err := fs.Descendants(pid)
	if err != nil {
		return nil
	}
	return ds
}

// alive reports whether pid is alive by internal/proc's one definition
// (neither missing nor a zombie or dead process).
func alive(fs proc.FS, pid int) bool { return fs.Alive(pid) }

// killAll sends SIGKILL to the process group led by pid and to each of pids
// (PostgreSQL's backends leave the postmaster's group with setsid).
func killAll(pid int, pids []int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

// waitGone waits until none of pids is alive or the timeout passes; it
// returns the ones still alive.
func waitGone(fs proc.FS, pids []int, timeout time.Duration) []int {
	deadline := time.Now().Add(timeout)
	for {
		var left []int
		for _, p := range pids {
			if fs.Alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}
