package proc

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// onlinePath is the kernel's list of online CPUs.
const onlinePath = "/sys/devices/system/cpu/online"

// PinError is a failure to read or set a CPU affinity, as opposed to a
// failure of the work done on a pinned thread.
type PinError struct{ Err error }

// Error returns the cause's message.
func (e *PinError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *PinError) Unwrap() error { return e.Err }

// OnlineCPUs returns the kernel's list of online CPUs ("0-1"), or
// "unknown", for messages.
func OnlineCPUs() string {
	b, err := os.ReadFile(onlinePath)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// OnlineCount is the number of the machine's online CPUs, whatever
// benchrig's own affinity: runtime.NumCPU counts only the CPUs this process
// may use (under taskset -c 1 it says 1, and a server on CPU 0 would use
// 100 % "of the machine"). runtime.NumCPU when the kernel's list cannot be
// read.
func OnlineCount() int {
	if online, err := ParseCPUList(OnlineCPUs()); err == nil && len(online) > 0 {
		return len(online)
	}
	return runtime.NumCPU()
}

// Affinity returns the CPUs thread (or process) tid may run on; 0 means
// the calling thread.
func Affinity(tid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &set); err != nil {
		return nil, fmt.Errorf("read CPU affinity of %d: %w", tid, err)
	}
	return CPUsOf(&set), nil
}

// CheckAllowed reports an error naming the first CPU of cpus that this
// process may not run on (offline, absent, or outside its own affinity, as
// under taskset or a container's cpuset), with the CPUs it may use.
func CheckAllowed(cpus []int) error {
	if len(cpus) == 0 {
		return errors.New("empty CPU list")
	}
	mine, err := Affinity(0)
	if err != nil {
		return err
	}
	ok := make(map[int]bool, len(mine))
	for _, c := range mine {
		ok[c] = true
	}
	for _, c := range cpus {
		if !ok[c] {
			return fmt.Errorf("CPU %d is not available: benchrig may run on CPUs %s (online: %s)", c, FormatCPUList(mine), OnlineCPUs())
		}
	}
	return nil
}

// PinThread sets the affinity of thread tid (0: the calling thread) to
// cpus. The error names the thread, the list and the CPUs available.
func PinThread(tid int, cpus []int) error {
	set := CPUSet(cpus)
	if err := unix.SchedSetaffinity(tid, &set); err != nil {
		return &PinError{pinFailure(tid, cpus, err)}
	}
	return nil
}

// pinFailure words a failed sched_setaffinity: `CPUs "7": cannot pin to
// them: …` for the calling thread (what a forked child inherits), `pin
// thread N to CPUs "7": …` for another.
func pinFailure(tid int, cpus []int, err error) error {
	what := fmt.Sprintf("CPUs %q: cannot pin to them", FormatCPUList(cpus))
	if tid != 0 {
		what = fmt.Sprintf("pin thread %d to CPUs %q", tid, FormatCPUList(cpus))
	}
	if errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("%s: none of them is online and allowed to benchrig (online CPUs: %s): %w", what, OnlineCPUs(), err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// PinProcess sets the affinity of every thread of process pid to cpus.
// Threads that exit meanwhile are skipped; threads started later inherit
// the mask of the thread that creates them.
func (fs FS) PinProcess(pid int, cpus []int) error {
	tids, err := fs.Threads(pid)
	if err != nil {
		return &PinError{fmt.Errorf("pin process %d: list its threads: %w", pid, err)}
	}
	for _, tid := range tids {
		if err := PinThread(tid, cpus); err != nil && !errors.Is(err, unix.ESRCH) {
			return err
		}
	}
	return nil
}

// PinSelf pins every thread of this process to cpus (threads created later
// inherit the mask). restore puts back the affinity each thread had, the
// one of the calling thread for threads started since.
func (fs FS) PinSelf(cpus []int) (restore func() error, err error) {
	old, err := Affinity(0)
	if err != nil {
		return nil, &PinError{err}
	}
	self := os.Getpid()
	if err := fs.PinProcess(self, cpus); err != nil {
		_ = fs.PinProcess(self, old)
		return nil, err
	}
	return func() error { return fs.PinProcess(self, old) }, nil
}

// BesideTarget is the list of the CPUs benchrig may run on that a target
// pinned to targetCPUs does not use; "" when the target is not pinned,
// or leaves none.
func BesideTarget(targetCPUs string) string {
	if targetCPUs == "" {
		return ""
	}
	target, err := ParseCPUList(targetCPUs)
	if err != nil {
		return ""
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return ""
	}
	var free []int
	for _, c := range CPUsOf(&set) {
		if !slices.Contains(target, c) {
			free = append(free, c)
		}
	}
	if len(free) == 0 {
		return ""
	}
	return FormatCPUList(free)
}

// PinClient pins every thread of benchrig to cpus, as PinSelf does, and
// sets GOMAXPROCS to their count, so the load generator runs only there.
// restore puts back the affinity and GOMAXPROCS.
func PinClient(cpus []int) (restore func(), err error) {
	undo, err := Default().PinSelf(cpus)
	if err != nil {
		return nil, err
	}
	prev := runtime.GOMAXPROCS(len(cpus))
	return func() {
		runtime.GOMAXPROCS(prev)
		_ = undo()
	}, nil
}

// OnPinnedThread runs fn on an OS thread of its own, locked to it, whose
// affinity is cpus (empty: unchanged), then restores the thread's affinity
// and unlocks it. A process forked by fn inherits the mask from its first
// instruction while the rest of benchrig stays unpinned, and a parent-death
// signal set by fn is tied to a thread the runtime does not retire (it
// only ends threads whose goroutine exits while locked).
//
// Should restoring the mask fail, the thread is kept out of the runtime's
// pool for good (its goroutine blocks while locked) rather than handed
// back pinned or ended, which would fire the child's parent-death signal.
// Failures to pin are *PinError; fn's error is returned as it is.
func OnPinnedThread(cpus []int, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		var old unix.CPUSet
		if len(cpus) > 0 {
			if err := unix.SchedGetaffinity(0, &old); err != nil {
				runtime.UnlockOSThread()
				done <- &PinError{fmt.Errorf("read own CPU affinity: %w", err)}
				return
			}
			if err := PinThread(0, cpus); err != nil {
				runtime.UnlockOSThread()
				done <- err
				return
			}
		}
		err := fn()
		if len(cpus) > 0 && unix.SchedSetaffinity(0, &old) != nil {
			done <- err
			select {} // keep the pinned thread out of the pool
		}
		runtime.UnlockOSThread()
		done <- err
	}()
	return <-done
}

// CheckOnline reports an error naming the first CPU of cpus that is not
// online, with the online CPUs. A target benchrig starts may be pinned to
// any online CPU, whatever benchrig's own affinity (benchrig under
// taskset -c 1 may start its server on CPU 0).
func CheckOnline(cpus []int) error {
	online, err := ParseCPUList(OnlineCPUs())
	if err != nil {
		return nil // unknown: the kernel says at start
	}
	ok := make(map[int]bool, len(online))
	for _, c := range online {
		ok[c] = true
	}
	for _, c := range cpus {
		if !ok[c] {
			return fmt.Errorf("CPU %d is not online: this machine's online CPUs are %s", c, OnlineCPUs())
		}
	}
	return nil
}
