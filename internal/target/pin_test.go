package target

import (
	"context"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/proc"
)

func TestPinning(t *testing.T) {
	sleep := need(t, "sleep")
	before := ownAffinities(t)
	spec := testSpec(t, "pinned", sleep, "30")
	spec.CPUs = "0"
	p := startT(t, spec, nil)
	if got := statusField(t, p.PID(), "Cpus_allowed_list"); got != "0" {
		t.Errorf("Cpus_allowed_list %q, want 0", got)
	}
	if p.CPUs() != "0" {
		t.Errorf("CPUs() %q, want 0", p.CPUs())
	}
	// benchrig's own threads keep their affinity.
	after := ownAffinities(t)
	for tid, cpus := range after {
		if b, ok := before[tid]; ok && b != cpus {
			t.Errorf("thread %d: affinity %s before Start, %s after", tid, b, cpus)
		}
	}

	// An unpinned target reports the CPUs it inherited.
	spec2 := testSpec(t, "free", sleep, "30")
	p2 := startT(t, spec2, nil)
	if want := statusField(t, p2.PID(), "Cpus_allowed_list"); p2.CPUs() != want {
		t.Errorf("CPUs() %q, kernel says %q", p2.CPUs(), want)
	}
}

// ownAffinities reads the CPU list of each thread of the test process.
func ownAffinities(t *testing.T) map[int]string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[int]string)
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var set unix.CPUSet
		if unix.SchedGetaffinity(tid, &set) == nil {
			out[tid] = FormatCPUList(proc.CPUsOf(&set))
		}
	}
	return out
}

func TestPinningUnavailableCPU(t *testing.T) {
	sleep := need(t, "sleep")
	spec := testSpec(t, "nocpu", sleep, "30")
	spec.CPUs = strconv.Itoa(proc.MaxCPU - 1)
	_, err := Start(context.Background(), spec, nil)
	if err == nil {
		t.Fatalf("pinning to CPU %d succeeded", proc.MaxCPU-1)
	}
	mustContain(t, err.Error(), `target "nocpu": cpus: CPUs "1023": cannot pin to them: none of them is online and allowed to benchrig (online CPUs: `)
	assertNoSleep30(t, sleep)
}
