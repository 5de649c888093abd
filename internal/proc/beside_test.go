package proc

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The client takes the CPUs it may use that a pinned target does not:
// none left, or no target pinning, gives "".
func TestBesideTarget(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	mine := CPUsOf(&set)
	if got := BesideTarget(""); got != "" {
		t.Errorf("unpinned target: %q, want \"\"", got)
	}
	if got := BesideTarget(FormatCPUList(mine)); got != "" {
		t.Errorf("a target on every CPU of mine: %q, want \"\"", got)
	}
	if len(mine) < 2 {
		t.Skipf("one CPU usable (%v): nothing to leave", mine)
	}
	got, err := ParseCPUList(BesideTarget(FormatCPUList(mine[:1])))
	if err != nil || !slices.Equal(got, mine[1:]) {
		t.Errorf("a target on CPU %d: %v (%v), want %v", mine[0], got, err, mine[1:])
	}
}

// A server's CPUs are the union of its threads' affinities; pinned when
// they leave an online CPU out. A child started under taskset on one CPU
// is found on it; this process, unpinned in a test, is not pinned.
func TestProcessesAffinity(t *testing.T) {
	fs := Default()
	online, err := ParseCPUList(OnlineCPUs())
	if err != nil {
		t.Fatal(err)
	}
	if PinnedWithin(online) {
		t.Errorf("every online CPU %v: pinned, want not", online)
	}
	if n := OnlineCount(); n != len(online) || n < runtime.NumCPU() {
		t.Errorf("OnlineCount() = %d, want the %d online CPUs (%s), at least runtime.NumCPU() = %d", n, len(online), OnlineCPUs(), runtime.NumCPU())
	}
	mine, err := fs.ProcessesAffinity([]int{os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	self, _ := Affinity(0)
	if !slices.Equal(mine, self) {
		t.Errorf("this process: %v, want its main thread's %v (threads inherit it)", mine, self)
	}
	if _, err := fs.ProcessesAffinity([]int{1 << 30}); err == nil {
		t.Error("a PID that does not exist: no error")
	}
	if len(online) < 2 || len(self) < 2 {
		t.Skipf("one CPU: nothing to pin apart (online %v, mine %v)", online, self)
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("no taskset (util-linux)")
	}
	cpu := self[len(self)-1]
	cmd := exec.Command("taskset", "-c", strconv.Itoa(cpu), "sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// taskset sets the mask, then execs sleep in the same process: wait
	// until the mask is set
	var got []int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got, err = fs.ProcessesAffinity([]int{cmd.Process.Pid})
		if (err == nil && slices.Equal(got, []int{cpu})) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || !slices.Equal(got, []int{cpu}) {
		t.Fatalf("a child under taskset -c %d: %v, %v", cpu, got, err)
	}
	if !PinnedWithin(got) {
		t.Errorf("CPU %d alone: not pinned, want pinned", cpu)
	}
	if both, err := fs.ProcessesAffinity([]int{cmd.Process.Pid, os.Getpid()}); err != nil || !slices.Equal(both, self) {
		t.Errorf("the child and this process: %v, %v; want the union %v", both, err, self)
	}
}
