package run

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/suite"
)

// pinClient pins every thread of benchrig to cpus and sets GOMAXPROCS to
// match, so the load generator runs only there (threads created later
// inherit the mask). The returned function restores the previous affinity
// and GOMAXPROCS.
func pinClient(cpus string) (restore func(), err error) {
	list, err := suite.ParseCPUList(cpus)
	if err != nil {
		return nil, err
	}
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("read CPU affinity: %w", err)
	}
	var want unix.CPUSet
	for _, c := range list {
		want.Set(c)
	}
	if err := setAllThreads(&want); err != nil {
		_ = setAllThreads(&old)
		return nil, err
	}
	prev := runtime.GOMAXPROCS(len(list))
	return func() {
		runtime.GOMAXPROCS(prev)
		_ = setAllThreads(&old)
	}, nil
}

// setAllThreads applies a CPU mask to every thread of this process.
func setAllThreads(set *unix.CPUSet) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("pin thread %d: %w", tid, err)
		}
	}
	return nil
}
