package postgres

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// procRoot is where the process table is read; tests may point it at a
// fixture tree.
var procRoot = "/proc"

// procStat is the part of /proc/<pid>/stat benchrig needs.
type procStat struct {
	state byte
	ppid  int
}

// readStat parses /proc/<pid>/stat. The command name may hold spaces and
// parentheses, so fields are counted after its last ')'.
func readStat(root string, pid int) (procStat, bool) {
	b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, false
	}
	f := bytes.Fields(b[i+2:]) // state ppid pgrp …
	if len(f) < 2 || len(f[0]) != 1 {
		return procStat{}, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return procStat{}, false
	}
	return procStat{state: f[0][0], ppid: ppid}, true
}

// descendants returns the PIDs of every live descendant of pid.
func descendants(root string, pid int) []int {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	parent := make(map[int]int)
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(root, p); ok && st.state != 'Z' {
			parent[p] = st.ppid
		}
	}
	var out []int
	frontier := []int{pid}
	for len(frontier) > 0 && len(out) < len(parent) {
		var next []int
		for p, pp := range parent {
			for _, f := range frontier {
				if pp == f {
					out = append(out, p)
					next = append(next, p)
				}
			}
		}
		frontier = next
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(root string, pid int) bool {
	st, ok := readStat(root, pid)
	return ok && st.state != 'Z'
}

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
func waitGone(root string, pids []int, timeout time.Duration) []int {
	deadline := time.Now().Add(timeout)
	for {
		var left []int
		for _, p := range pids {
			if alive(root, p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}
