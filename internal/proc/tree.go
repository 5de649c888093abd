package proc

import "sort"

// Table is one reading of the stat file of every process, by PID: the
// parent links a process tree is made of. Processes that vanished during
// the reading are absent; exited ones (zombies) are present with their
// state.
type Table map[int]Stat

// Table reads the stat of every process. Processes that vanish while it
// reads, or whose stat cannot be read, are skipped; only a failure to list
// the processes is an error. Command names are not read.
func (fs FS) Table() (Table, error) {
	pids, err := fs.PIDs()
	if err != nil {
		return nil, err
	}
	t := make(Table, len(pids))
	buf := make([]byte, 4096)
	for _, pid := range pids {
		if st, err := fs.ReadStat(pid, buf); err == nil {
			t[pid] = st
		}
	}
	return t, nil
}

// Children lists the live (not exited) processes whose parent is pid, in
// increasing order.
func (t Table) Children(pid int) []int {
	var out []int
	for p, st := range t {
		if st.PPID == pid && !st.Exited() {
			out = append(out, p)
		}
	}
	sort.Ints(out)
	return out
}

// Descendants lists every live process below pid (children, their
// children, …; pid itself excluded), in increasing order. Exited processes
// are skipped but their live children are followed (a zombie's children
// have already been reparented by the kernel, so this only matters for a
// reading taken mid-exit).
func (t Table) Descendants(pid int) []int {
	kids := make(map[int][]int, len(t))
	for p, st := range t {
		kids[st.PPID] = append(kids[st.PPID], p)
	}
	var out []int
	seen := map[int]bool{pid: true}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range kids[p] {
			if seen[c] { // guards against a PPID cycle in a corrupt fixture
				continue
			}
			seen[c] = true
			queue = append(queue, c)
			if !t[c].Exited() {
				out = append(out, c)
			}
		}
	}
	sort.Ints(out)
	return out
}

// Group lists the live processes of process group pgid, in increasing
// order.
func (t Table) Group(pgid int) []int {
	var out []int
	for p, st := range t {
		if st.PGRP == pgid && !st.Exited() {
			out = append(out, p)
		}
	}
	sort.Ints(out)
	return out
}

// Descendants reads the table and lists the live descendants of pid.
func (fs FS) Descendants(pid int) ([]int, error) {
	t, err := fs.Table()
	if err != nil {
		return nil, err
	}
	return t.Descendants(pid), nil
}

// Group reads the table and lists the live members of process group pgid.
func (fs FS) Group(pgid int) ([]int, error) {
	t, err := fs.Table()
	if err != nil {
		return nil, err
	}
	return t.Group(pgid), nil
}
