package proc

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"
)

// ProcessesAffinity returns the CPUs that any thread of the processes
// pids may run on: the union of their threads' affinities, in increasing
// order. Threads and processes that exit meanwhile are skipped; an error
// when none could be read.
func (fs FS) ProcessesAffinity(pids []int) ([]int, error) {
	var union unix.CPUSet
	read := 0
	var first error
	for _, pid := range pids {
		tids, err := fs.Threads(pid)
		if err != nil {
			first = cmp.Or(first, fmt.Errorf("list the threads of %d: %w", pid, err))
			continue
		}
		for _, tid := range tids {
			var set unix.CPUSet
			if err := unix.SchedGetaffinity(tid, &set); err != nil {
				if !errors.Is(err, unix.ESRCH) {
					first = cmp.Or(first, fmt.Errorf("read CPU affinity of thread %d of %d: %w", tid, pid, err))
				}
				continue
			}
			for i := range union {
				union[i] |= set[i]
			}
			read++
		}
	}
	if read == 0 {
		if first == nil {
			first = fmt.Errorf("processes %v: none is running", pids)
		}
		return nil, first
	}
	return CPUsOf(&union), nil
}

// PinnedWithin reports whether cpus leave out at least one online CPU:
// a process that may run only on them was pinned (by taskset, a cpuset,
// a server's own setting), one that may run on every online CPU was not.
func PinnedWithin(cpus []int) bool {
	online, err := ParseCPUList(OnlineCPUs())
	if err != nil {
		return false
	}
	for _, c := range online {
		if !slices.Contains(cpus, c) {
			return true
		}
	}
	return false
}
