package target

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/cgroup"
)

func ok(v uint64) cgroup.Counter { return cgroup.Counter{Value: v, OK: true} }

// The reasons a limit gives, from the counters alone.
func TestLimitErrorText(t *testing.T) {
	mem := cgroup.Limits{Memory: 512 << 20, Pids: 32}
	for _, c := range []struct {
		l      cgroup.Limits
		st     cgroup.Stats
		killed bool
		want   string
	}{
		{mem, cgroup.Stats{MemoryOOMKill: ok(1), MemoryPeak: ok(512<<20 - 200<<10)}, false, "killed by the memory limit (512 MiB) at 511.8 MiB"},
		{mem, cgroup.Stats{MemoryOOMKill: ok(2), MemoryPeak: ok(512 << 20), PidsMax: ok(3)}, false, "killed by the memory limit (512 MiB) at 512 MiB"},
		{mem, cgroup.Stats{MemoryOOMKill: ok(0), MemoryFailcnt: ok(9), PidsMax: ok(17)}, true, "held at the pids limit (32): fork failed 17 times"},
		{mem, cgroup.Stats{MemoryOOMKill: ok(0), PidsMax: ok(1)}, false, "held at the pids limit (32): fork failed 1 time"},
		{cgroup.Limits{}, cgroup.Stats{PidsMax: ok(4)}, false, "held at the pids limit of an enclosing group: fork failed 4 times"},
		// a kernel without oom_kill: SIGKILL benchrig did not send, with the limit hit
		{mem, cgroup.Stats{MemoryFailcnt: ok(9), MemoryPeak: ok(512 << 20)}, true, "killed by the memory limit (512 MiB) at 512 MiB"},
		{mem, cgroup.Stats{MemoryFailcnt: ok(9)}, false, ""},
		{mem, cgroup.Stats{MemoryOOMKill: ok(0), MemoryFailcnt: ok(9)}, true, ""},
		{cgroup.Limits{CPUs: 1}, cgroup.Stats{NrThrottled: ok(50)}, false, ""},
	} {
		got := ""
		if e := limitError(c.l, c.st, c.killed); e != nil {
			got = e.Error()
		}
		if got != c.want {
			t.Errorf("limitError(%+v, killed %v) = %q, want %q", c.st, c.killed, got, c.want)
		}
	}
}

func TestGroupName(t *testing.T) {
	for in, want := range map[string]string{
		"node-http":             "node-http-",
		"Node_HTTP.v2":          "node-http-v2-",
		"---":                   "target-",
		"":                      "target-",
		strings.Repeat("a", 80): strings.Repeat("a", 32) + "-",
	} {
		if got := groupName(in); !strings.HasPrefix(got, want) || len(got) > 40 {
			t.Errorf("groupName(%q) = %q, want %s<n>", in, got, want)
		}
	}
	if a, b := groupName("x"), groupName("x"); a == b {
		t.Errorf("two groups named %q", a)
	}
}

func TestLimitWarnings(t *testing.T) {
	swap := int64(0)
	l, w := limitWarnings(cgroup.Limits{CPUs: 2, Memory: 64 << 20, Swap: &swap}, []int{0, 1})
	if len(w) == 0 || !strings.Contains(w[0], "cpus 2 limits nothing: the target is pinned to 2 CPUs") {
		t.Errorf("warnings %q, want cpus 2 on 2 pinned CPUs", w)
	}
	if total, ok := swapTotal("/proc/meminfo"); ok && total == 0 {
		if l.Swap != nil || len(w) != 2 || !strings.Contains(w[1], "no swap") {
			t.Errorf("no swap here: limits %+v, warnings %q", l, w)
		}
	}
	if _, w := limitWarnings(cgroup.Limits{CPUs: 0.5}, []int{0}); len(w) != 0 {
		t.Errorf("cpus 0.5 on 1 CPU: warnings %q", w)
	}
	file := filepath.Join(t.TempDir(), "meminfo")
	if err := os.WriteFile(file, []byte("MemTotal:  100 kB\nSwapTotal:       2048 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, ok := swapTotal(file); !ok || v != 2048 {
		t.Errorf("swapTotal = %d, %v", v, ok)
	}
}

func TestCgroupFigures(t *testing.T) {
	a := cgroup.Stats{CPUUsageNS: ok(1e9), NrPeriods: ok(10), NrThrottled: ok(2), ThrottledNS: ok(5e7), PidsPeak: ok(3)}
	b := cgroup.Stats{CPUUsageNS: ok(2e9), NrPeriods: ok(30), NrThrottled: ok(12), ThrottledNS: ok(55e7), MemoryPeak: ok(1 << 20), MemoryOOMKill: ok(0), PidsMax: ok(0)}
	f := CgroupFigures("load", a, b, 2*time.Second)
	if f.CPUSeconds != 1 || f.Cores != 0.5 || f.Periods != 20 || f.Throttled != 10 || f.ThrottledSeconds != 0.5 || f.MemoryPeakBytes != 1<<20 {
		t.Errorf("figures %+v", f)
	}
	if strings.Join(f.Missing, ",") != "pids_peak" {
		t.Errorf("missing %q, want pids_peak", f.Missing)
	}
}
