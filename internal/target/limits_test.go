package target

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/cgroup"
	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/sample"
)

// These tests run targets under limits on the machine's own cgroup
// hierarchy: they need root and a writable hierarchy (v1 or v2). Without
// one they are skipped with the reason; under CI=true they fail.

// needCgroups skips the test (fails it under CI=true) when no cgroup
// hierarchy is usable.
func needCgroups(t *testing.T) {
	t.Helper()
	_, _, err := detectHierarchy()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no usable cgroup hierarchy (CI=true, so this fails): %v", err)
	}
	t.Skipf("no usable cgroup hierarchy: %v", err)
}

// cgroupRoot is where the hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// groupDirs lists the directories of every hierarchy under cgroupRoot
// whose name is name, or starts with name when prefix.
func groupDirs(t *testing.T, name string, prefix bool) []string {
	t.Helper()
	var found []string
	_ = filepath.WalkDir(cgroupRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.Count(strings.TrimPrefix(path, cgroupRoot), "/") > 5 {
			return filepath.SkipDir
		}
		base := filepath.Base(path)
		if base == name || (prefix && strings.HasPrefix(base, name)) {
			found = append(found, path)
			return filepath.SkipDir
		}
		return nil
	})
	return found
}

// ownGroupsGone fails t when a group this test process made is left, after
// waiting up to 5 s (a watchdog may still be removing it).
func ownGroupsGone(t *testing.T) {
	t.Helper()
	prefix := fmt.Sprintf("benchrig-%d-", os.Getpid())
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if left = groupDirs(t, prefix, true); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("groups left behind: %v", left)
	}
}

// limitedSpec is testSpec with limits.
func limitedSpec(t *testing.T, name string, l cgroup.Limits, argv ...string) Spec {
	s := testSpec(t, name, argv...)
	s.Limits = &l
	return s
}

// stopT stops p within 20 s.
func stopT(t *testing.T, p *Process) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

// cgroupStats reads the target's counters or fails t.
func cgroupStats(t *testing.T, p *Process) cgroup.Stats {
	t.Helper()
	st, err := p.CgroupStats()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

const busyLoop = "while :; do :; done"

// busyTwo keeps two shells busy: it would use two cores.
const busyTwo = "(while :; do :; done) & while :; do :; done"

// A busy target limited to half a core uses at most 0.55 cores by the
// group's counter, and is throttled; the same target unlimited, run over
// the same window, uses more when the machine lets the limit bind at all.
func TestLimitCPU(t *testing.T) {
	needCgroups(t)
	need(t, "sh")
	p := startT(t, limitedSpec(t, "busy-half", cgroup.Limits{CPUs: 0.5}, "sh", "-c", busyTwo), nil)
	q := startT(t, limitedSpec(t, "busy-free", cgroup.Limits{}, "sh", "-c", busyTwo), nil)
	time.Sleep(300 * time.Millisecond)
	p0, q0, t0 := cgroupStats(t, p), cgroupStats(t, q), time.Now()
	// A window of 2 s, longer on a machine so busy that the unlimited
	// target got less than 0.2 s of CPU in it (up to 20 s): the figures
	// then say something of the limit, not of the machine.
	var p1, q1 cgroup.Stats
	var wall time.Duration
	var lim, free result.CgroupFigures
	for {
		time.Sleep(500 * time.Millisecond)
		p1, q1, wall = cgroupStats(t, p), cgroupStats(t, q), time.Since(t0)
		lim, free = CgroupFigures("load", p0, p1, wall), CgroupFigures("load", q0, q1, wall)
		if wall >= 2*time.Second && (free.Cores*wall.Seconds() >= 0.2 || wall >= 20*time.Second) {
			break
		}
	}
	if slices.Contains(lim.Missing, "cpu_s") || slices.Contains(lim.Missing, "nr_throttled") {
		t.Fatalf("the group's CPU counters are unavailable: %+v", p1)
	}
	t.Logf("limited to 0.5: %.3f cores (periods %d, throttled %d for %.3f s); unlimited, same window: %.3f cores",
		lim.Cores, lim.Periods, lim.Throttled, lim.ThrottledSeconds, free.Cores)
	if lim.Cores > 0.55 {
		t.Errorf("limited to 0.5 cores, the group used %.3f", lim.Cores)
	}
	if lim.Cores < 0.02 {
		t.Errorf("limited to 0.5 cores, the group used %.3f: the target did not run, or is not counted", lim.Cores)
	}
	switch {
	case free.Cores > lim.Cores:
	case lim.Periods > 0 && 2*lim.Throttled < lim.Periods:
		// The machine gave the limited target less than its quota in most
		// periods: the limit hardly bound, and the two say nothing of it.
		t.Logf("not compared: the machine is too loaded for the limit to bind (throttled in %d of %d periods)", lim.Throttled, lim.Periods)
	default:
		t.Errorf("unlimited, the busy target used %.3f cores, limited %.3f: want more", free.Cores, lim.Cores)
	}
	// A busy target exceeds its quota in about every period; on a machine
	// so loaded that it did not within 2 s, wait a little more.
	for deadline := time.Now().Add(3 * time.Second); p1.NrThrottled.Value == 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		p1 = cgroupStats(t, p)
	}
	stopT(t, p)
	stopT(t, q)
	switch {
	case p1.NrThrottled.Value > 0:
	case lim.Cores < 0.45:
		// The machine never gave it half a core to spend: a quota it can
		// reach shows the throttling.
		t.Logf("never throttled at 0.5 cores on a machine that gave it %.3f; checking at 0.02 cores", lim.Cores)
		r := startT(t, limitedSpec(t, "busy-tiny", cgroup.Limits{CPUs: 0.02}, "sh", "-c", busyTwo), nil)
		st := cgroupStats(t, r)
		for deadline := time.Now().Add(3 * time.Second); st.NrThrottled.Value == 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			st = cgroupStats(t, r)
		}
		stopT(t, r)
		t.Logf("at 0.02 cores: periods %v, throttled %v for %v ns", st.NrPeriods, st.NrThrottled, st.ThrottledNS)
		if st.NrThrottled.Value == 0 {
			t.Errorf("a busy target limited to 0.02 cores was never throttled: %+v", st)
		}
	default:
		t.Errorf("a busy target limited to 0.5 cores, using %.3f, was never throttled: %+v", lim.Cores, p1)
	}
	ownGroupsGone(t)
}

// A target that allocates past its memory limit ends with the OOM reason;
// the next start of the same spec, in a fresh group, runs; nothing is left.
func TestLimitMemoryOOM(t *testing.T) {
	needCgroups(t)
	need(t, "sh")
	need(t, "tail")
	flag := filepath.Join(t.TempDir(), "started-once")
	// The first start reads zeros into tail's line buffer, which grows
	// until the limit; later starts just wait.
	script := fmt.Sprintf("test -e %[1]s && exec sleep 30; : > %[1]s; exec tail /dev/zero", flag)
	spec := limitedSpec(t, "eater", cgroup.Limits{Memory: 64 << 20, Swap: new(int64(0))}, "sh", "-c", script)

	p, err := Start(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		stopT(t, p)
		t.Fatal("a target reading zeros into 64 MiB still ran after 10 s")
	}
	lerr := p.LimitError()
	st := cgroupStats(t, p)
	rec := p.CgroupRecord()
	stopT(t, p)
	t.Logf("exit %q; %v; oom_kill %v, failcnt %v, peak %v; warnings %q", p.ExitStatus(), lerr, st.MemoryOOMKill, st.MemoryFailcnt, st.MemoryPeak, p.LimitWarnings())
	var le *LimitError
	if !errors.As(lerr, &le) || le.Limit != "memory" || !strings.HasPrefix(le.Text, "killed by the memory limit (64 MiB) at ") || !strings.HasSuffix(le.Text, " MiB") {
		t.Errorf("LimitError %v, want killed by the memory limit (64 MiB) at X MiB", lerr)
	}
	if rec == nil || rec.End != fmt.Sprint(lerr) || rec.Limits.MemoryBytes != 64<<20 {
		t.Errorf("CgroupRecord %+v, want the limits and End %q", rec, lerr)
	}
	if final, err := p.CgroupStats(); err != nil || final.MemoryOOMKill != st.MemoryOOMKill {
		t.Errorf("after Stop, CgroupStats = %+v, %v; want the last counters", final, err)
	}
	if procAlive(p.PID()) {
		t.Errorf("target %d alive after Stop", p.PID())
	}

	q := startT(t, spec, nil)
	time.Sleep(500 * time.Millisecond)
	if !q.Alive() {
		t.Fatalf("second start ended: %s", q.ExitStatus())
	}
	if err := q.LimitError(); err != nil {
		t.Errorf("second start: LimitError %v", err)
	}
	if n1, _ := p.CgroupName(); func() bool { n2, _ := q.CgroupName(); return n1 == n2 }() {
		t.Errorf("both starts ran in group %s", n1)
	}
	stopT(t, q)
	if procAlive(q.PID()) {
		t.Errorf("target %d alive after Stop", q.PID())
	}
	ownGroupsGone(t)
}

// A target that forks without end is held at its pids limit, says so, and
// its whole tree and group go on Stop.
func TestLimitPids(t *testing.T) {
	needCgroups(t)
	need(t, "sh")
	need(t, "sleep")
	marker := newMarker(t, 21)
	// At most 100 forks, each a sleep left running: the shell meets the
	// limit of 32 long before, and ends.
	script := fmt.Sprintf("i=0; while [ $i -lt 100 ]; do sleep %s & i=$((i+1)); done 2>/dev/null; exit 0", marker)
	p := startT(t, limitedSpec(t, "forker", cgroup.Limits{Pids: 32}, "sh", "-c", script), nil)
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the forking shell did not end within 10 s")
	}
	st := cgroupStats(t, p)
	lerr := p.LimitError()
	sleeps := markerSleeps(marker)
	t.Logf("exit %q; %v; pids current %v, peak %v, max events %v; %d sleeps", p.ExitStatus(), lerr, st.PidsCurrent, st.PidsPeak, st.PidsMax, len(sleeps))
	if st.PidsCurrent.Value > 32 || (st.PidsPeak.OK && st.PidsPeak.Value > 32) || len(sleeps) > 32 {
		t.Errorf("over the pids limit 32: %+v, %d sleeps", st, len(sleeps))
	}
	// forked up to the limit: the group's own count says so (some of the
	// forks may not have exec'd their sleep yet when the marker is
	// counted, on a loaded machine: seen with 31 in the group, 15 sleeps)
	if len(sleeps) < 16 && st.PidsCurrent.Value < 16 && (!st.PidsPeak.OK || st.PidsPeak.Value < 16) {
		t.Errorf("only %d sleeps ran and %v processes in the group: the shell did not fork up to the limit", len(sleeps), st.PidsCurrent)
	}
	var le *LimitError
	if !errors.As(lerr, &le) || le.Limit != "pids" || !strings.HasPrefix(le.Text, "held at the pids limit (32): fork failed ") {
		t.Errorf("LimitError %v, want held at the pids limit (32): fork failed N times", lerr)
	}
	stopT(t, p)
	if left := markerSleeps(marker); len(left) != 0 {
		t.Errorf("after Stop, %d sleeps of the tree still run", len(left))
	}
	ownGroupsGone(t)
}

// kill -9 of the benchrig that started a target under limits: its
// watchdog kills the tree and removes the group within seconds; and
// RemoveStaleGroups leaves a live group alone.
func TestLimitKill9(t *testing.T) {
	needCgroups(t)
	need(t, "sh")
	need(t, "sleep")
	live := startT(t, limitedSpec(t, "live", cgroup.Limits{Pids: 64}, "sleep", "30"), nil)
	liveName, _ := live.CgroupName()

	marker := newMarker(t, 22)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBenchrig$")
	cmd.Env = append(os.Environ(), "BENCHRIG_TARGET_REAP_SCRIPT="+fmt.Sprintf("sleep %[1]s1 & sleep %[1]s2", marker),
		"BENCHRIG_TARGET_HELPER_LOG="+t.TempDir(), "BENCHRIG_TARGET_HELPER_LIMITS=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var pid int
	var group string
	r := bufio.NewReader(out)
	if _, err := fmt.Fscanf(r, "pid %d\ngroup %s\n", &pid, &group); err != nil {
		t.Fatalf("helper printed no PID and group: %v", err)
	}
	if got := waitMarkers(marker, 2); len(got) != 2 {
		t.Fatalf("%d sleeps of the target running, want 2", len(got))
	}
	dirs := groupDirs(t, group, false)
	if len(dirs) == 0 {
		t.Fatalf("group %s not found under %s", group, cgroupRoot)
	}
	if err := cmd.Process.Signal(unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := time.Now()
	if left := waitMarkers(marker, 0); len(left) != 0 {
		t.Errorf("processes %v of the target survived kill -9 of the benchrig that started it", left)
	}
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if left = groupDirs(t, group, false); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("tree gone and group %s removed %v after kill -9", group, time.Since(killed).Round(time.Millisecond))
	if len(left) > 0 {
		t.Errorf("group directories %v still there 5 s after kill -9", left)
	}
	if proc.Default().Alive(pid) {
		t.Errorf("target %d survived", pid)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	removed, err := RemoveStaleGroups(ctx)
	if err != nil {
		t.Errorf("RemoveStaleGroups: %v", err)
	}
	if slices.Contains(removed, liveName) || len(groupDirs(t, liveName, false)) == 0 || !live.Alive() {
		t.Errorf("RemoveStaleGroups removed %v: the live group %s (alive %v)", removed, liveName, live.Alive())
	}
	stopT(t, live)
	ownGroupsGone(t)
}

// treeCPU is the CPU seconds of the target's tree by /proc over a window,
// as the sampler counts it, beside the group's own count over the same
// window.
func treeCPU(t *testing.T, p *Process, d time.Duration) (procS, kernelS float64) {
	t.Helper()
	s, err := sample.Start(context.Background(), sample.Config{PID: p.PID(), Interval: 500 * time.Millisecond, NoPSS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	time.Sleep(300 * time.Millisecond)
	s.Mark("a")
	k0 := cgroupStats(t, p)
	time.Sleep(d)
	s.Mark("b")
	k1 := cgroupStats(t, p)
	samples := s.Stop()
	var a, b *sample.Sample
	for i := range samples {
		if samples[i].Phase == "a" && a == nil {
			a = &samples[i]
		}
		if samples[i].Phase == "b" && b == nil {
			b = &samples[i]
		}
	}
	if a == nil || b == nil {
		t.Fatalf("no edge samples: %+v", samples)
	}
	return b.CPU() - a.CPU(), float64(k1.CPUUsageNS.Value-k0.CPUUsageNS.Value) / 1e9
}

// The kernel's count of a busy target's CPU and the /proc tree's agree;
// for a target that starts a short-lived child per request, the kernel
// counts more: what /proc cannot see.
func TestLimitKernelVsProcCPU(t *testing.T) {
	needCgroups(t)
	need(t, "sh")
	p := startT(t, limitedSpec(t, "busy-count", cgroup.Limits{}, "sh", "-c", busyLoop), nil)
	procS, kernelS := treeCPU(t, p, 2*time.Second)
	stopT(t, p)
	// /proc counts in ticks of 10 ms (USER_HZ), utime and stime each
	// rounded down at each reading: two readings of one busy process can
	// be up to 20 ms off, 2 % of a second of CPU. On a loaded machine that
	// gives the target less than a core, that is more than 2 % of what it
	// used: the bound is 2 % or 25 ms, whichever is larger.
	diff := kernelS - procS
	tol := max(0.02*kernelS, 0.025)
	t.Logf("busy: kernel %.3f s, /proc tree %.3f s over 2 s: %+.2f %% (%+.1f ms; bound ±%.1f ms)", kernelS, procS, 100*diff/kernelS, 1000*diff, 1000*tol)
	if math.Abs(diff) > tol {
		t.Errorf("busy target: kernel %.3f s, /proc tree %.3f s: %.1f ms apart, want within %.1f ms", kernelS, procS, 1000*diff, 1000*tol)
	}

	// Each /bin/true is started in the background of a subshell that
	// exits at once: it is orphaned and reaped by the watchdog, outside
	// the tree the sampler follows, so its CPU never reaches a cutime
	// in it; the kernel counts it in the group.
	q := startT(t, limitedSpec(t, "spawner", cgroup.Limits{}, "sh", "-c", fmt.Sprintf("while :; do (%s &); done", need(t, "true"))), nil)
	procS, kernelS = treeCPU(t, q, 2*time.Second)
	stopT(t, q)
	t.Logf("short-lived children: kernel %.3f s, /proc tree %.3f s over 2 s: %+.1f %%", kernelS, procS, 100*(kernelS-procS)/kernelS)
	if kernelS <= procS {
		t.Errorf("short-lived children: kernel %.3f s, /proc tree %.3f s: want the kernel's count higher", kernelS, procS)
	}

	// Children the shell itself waits for reach its cutime: the two
	// counts then differ only by what the kernel charges after a child's
	// times are final (its exit) and /proc's 10 ms ticks. Measured, not
	// checked.
	r := startT(t, limitedSpec(t, "waiter", cgroup.Limits{}, "sh", "-c", fmt.Sprintf("while :; do %s; done", need(t, "true"))), nil)
	procS, kernelS = treeCPU(t, r, 2*time.Second)
	stopT(t, r)
	t.Logf("waited-for children: kernel %.3f s, /proc tree %.3f s over 2 s: %+.1f %%", kernelS, procS, 100*(kernelS-procS)/kernelS)
	ownGroupsGone(t)
}

// Without limits, no cgroup is made or read.
func TestNoLimitsNoCgroup(t *testing.T) {
	need(t, "sleep")
	p := startT(t, testSpec(t, "plain", "sleep", "30"), nil)
	if _, err := p.CgroupStats(); !errors.Is(err, ErrNoLimits) {
		t.Errorf("CgroupStats without limits: %v, want ErrNoLimits", err)
	}
	if p.Limits() != nil || p.LimitError() != nil || p.CgroupRecord() != nil || p.LimitWarnings() != nil {
		t.Error("a target without limits reports limits")
	}
	if p.lim != nil {
		t.Error("a cgroup was made for a target without limits")
	}
}
