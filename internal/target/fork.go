package target

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// forkPinned starts cmd as the leader of its own process group with
// Pdeathsig SIGKILL and, when cpus is not empty, pinned to those CPUs from its
// first instruction. It returns the CPU list the child actually runs on.
//
// Both Pdeathsig and the affinity belong to the OS thread that forks, so the
// goroutine is locked to its thread around cmd.Start:
//
//   - Pdeathsig fires when the thread that forked the child exits, not the
//     process. Locking keeps the fork on a thread the runtime does not retire
//     (it only ends threads whose goroutine exits while locked), so the
//     signal fires when benchrig itself dies.
//   - The child inherits the forking thread's affinity mask. Setting the
//     mask on this thread just before the fork and restoring it just after
//     pins the child without a window in which it runs elsewhere, and leaves
//     the rest of benchrig unpinned.
func forkPinned(cmd *exec.Cmd, cpus []int) (effective string, err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL

	// The fork runs on a goroutine of its own so that, should restoring the
	// mask fail, that goroutine can keep its pinned thread out of the
	// runtime's pool for good (blocking while locked) instead of handing it
	// back pinned or ending it (which would fire Pdeathsig on the child).
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		var old unix.CPUSet
		if len(cpus) > 0 {
			if err := unix.SchedGetaffinity(0, &old); err != nil {
				runtime.UnlockOSThread()
				done <- &pinError{fmt.Errorf("read own CPU affinity: %w", err)}
				return
			}
			want := cpuSet(cpus)
			if err := unix.SchedSetaffinity(0, &want); err != nil {
				runtime.UnlockOSThread()
				done <- &pinError{fmt.Errorf("%q: cannot pin to them (online CPUs: %s): %w",
					FormatCPUList(cpus), onlineCPUs(), err)}
				return
			}
		}
		err := cmd.Start()
		if len(cpus) > 0 && unix.SchedSetaffinity(0, &old) != nil {
			done <- err
			select {} // keep the pinned thread (and the child's Pdeathsig parent) alive
		}
		runtime.UnlockOSThread()
		done <- err
	}()
	if err := <-done; err != nil {
		return "", err
	}
	return affinityOf(cmd.Process.Pid), nil
}

// pinError is a failure to pin the target to its CPUs (as opposed to a
// failure to start it).
type pinError struct{ err error }

func (e *pinError) Error() string { return e.err.Error() }
func (e *pinError) Unwrap() error { return e.err }

// affinityOf returns the CPU list a process may run on, or "" when it cannot
// be read (the process has already gone).
func affinityOf(pid int) string {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return ""
	}
	return FormatCPUList(cpusOf(&set))
}

// onlineCPUs returns the kernel's list of online CPUs, for error messages.
func onlineCPUs() string {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
