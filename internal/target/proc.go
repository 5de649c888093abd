package target

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// procRoot is where the process filesystem is mounted. The helpers below
// take the root as a parameter so tests can point them at fixture trees.
const procRoot = "/proc"

// procStat is the part of /proc/PID/stat this package needs.
type procStat struct {
	PID       int
	Comm      string
	State     byte // R, S, D, Z, X, …
	PPID      int
	PGRP      int
	StartTime uint64 // clock ticks after boot
}

// gone reports whether the process has terminated and only waits to be
// reaped (a zombie) or is being torn down.
func (s procStat) gone() bool { return s.State == 'Z' || s.State == 'X' || s.State == 'x' }

// readStat reads and parses root/PID/stat.
func readStat(root string, pid int) (procStat, error) {
	b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(pid, b)
}

// parseStat parses the text of /proc/PID/stat. The command name is in
// parentheses and may itself contain spaces and parentheses, so the fields
// are read after the last ')'.
func parseStat(pid int, b []byte) (procStat, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no command name in parentheses", pid)
	}
	f := bytes.Fields(b[end+1:])
	// state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime priority nice num_threads
	// itrealvalue starttime
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields after the command name, want at least 20", pid, len(f))
	}
	s := procStat{PID: pid, Comm: string(b[open+1 : end]), State: f[0][0]}
	var err error
	if s.PPID, err = strconv.Atoi(string(f[1])); err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: ppid: %w", pid, err)
	}
	if s.PGRP, err = strconv.Atoi(string(f[2])); err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: pgrp: %w", pid, err)
	}
	if s.StartTime, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: starttime: %w", pid, err)
	}
	return s, nil
}

// pids lists the process IDs under root, in increasing order.
func pids(root string) ([]int, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	sort.Ints(out)
	return out, nil
}

// groupMembers lists the live (not zombie) processes of process group pgid.
// Processes that vanish during the scan are skipped.
func groupMembers(root string, pgid int) ([]int, error) {
	all, err := pids(root)
	if err != nil {
		return nil, err
	}
	var members []int
	for _, pid := range all {
		st, err := readStat(root, pid)
		if err != nil || st.gone() {
			continue
		}
		if st.PGRP == pgid {
			members = append(members, pid)
		}
	}
	return members, nil
}
