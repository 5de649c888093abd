package sample

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// step is one state of a fake tree and what a sample of it must show.
type step struct {
	procs      []fakeProc
	user, sys  float64 // cumulative seconds expected after this step
	procsCount int
	sched      uint64
	pssUnavail bool
	exited     bool // the root is gone: no sample for this step
}

// TestFixtureChanges samples a fake tree that changes between samples, as
// real trees do: children exit and are reaped, leave the tree, PIDs are
// reused, threads come and go, the root exits.
func TestFixtureChanges(t *testing.T) {
	init := fakeProc{pid: 1, utime: 7}
	tests := []struct {
		name  string
		steps []step
	}{
		{"child reaped by root", []step{
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 100, stime: 10}, {pid: 11, ppid: 10, utime: 50, stime: 5}}, user: 1.50, sys: 0.15, procsCount: 2},
			// 11 used 20+2 more ticks, exited and was reaped: 10's cutime/cstime hold its 70+7.
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 100, stime: 10, cutime: 70, cstime: 7}}, user: 1.70, sys: 0.17, procsCount: 1},
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 105, stime: 10, cutime: 70, cstime: 7}}, user: 1.75, sys: 0.17, procsCount: 1},
		}},
		{"reaping seen late (exit read before the parent's cutime grew)", []step{
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 100}, {pid: 11, ppid: 10, utime: 50}}, user: 1.50, procsCount: 2},
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 100}}, user: 1.50, procsCount: 1},
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 100, cutime: 60}}, user: 1.60, procsCount: 1},
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 130, cutime: 60}}, user: 1.90, procsCount: 1},
		}},
		{"grandchild reaped by child, child reaped by root", []step{
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 10}, {pid: 11, ppid: 10, utime: 20}, {pid: 12, ppid: 11, utime: 30}}, user: 0.60, procsCount: 3},
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 10}, {pid: 11, ppid: 10, utime: 25, cutime: 35}}, user: 0.70, procsCount: 2},
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 10, cutime: 60}}, user: 0.70, procsCount: 1},
		}},
		{"child re-parented out of the tree", []step{
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 100}, {pid: 11, ppid: 10, utime: 50}}, user: 1.50, procsCount: 2},
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 110}, {pid: 11, ppid: 1, utime: 80}}, user: 1.60, procsCount: 1},
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 110}, {pid: 11, ppid: 1, utime: 500}}, user: 1.60, procsCount: 1},
		}},
		{"PID reused by a new child", []step{
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 100}, {pid: 11, ppid: 10, utime: 50}}, user: 1.50, procsCount: 2},
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 100, cutime: 50}, {pid: 11, ppid: 10, utime: 3, start: 9999}}, user: 1.53, procsCount: 2},
		}},
		{"zombie child counts CPU until reaped", []step{
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 100}, {pid: 11, ppid: 10, utime: 50}}, user: 1.50, procsCount: 2},
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 100}, {pid: 11, ppid: 10, utime: 55, state: "Z"}}, user: 1.55, procsCount: 1},
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 100, cutime: 55}}, user: 1.55, procsCount: 1},
		}},
		{"threads come and go", []step{
			{procs: []fakeProc{init, {pid: 10, ppid: 1, sched: map[int]uint64{10: 1000, 20: 500}}}, sched: 1500, procsCount: 1},
			{procs: []fakeProc{init, {pid: 10, ppid: 1, sched: map[int]uint64{10: 1200, 21: 300}}}, sched: 2000, procsCount: 1},
			{procs: []fakeProc{init, {pid: 10, ppid: 1, sched: map[int]uint64{10: 1300, 21: 350}}}, sched: 2150, procsCount: 1},
		}},
		{"PSS unreadable for one process", []step{
			{procs: []fakeProc{init, {pid: 10, ppid: 1, pssKB: 10}, {pid: 11, ppid: 10, pssKB: 20, noRollup: true}}, procsCount: 2, pssUnavail: true},
		}},
		{"root exits", []step{
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 100}}, user: 1.00, procsCount: 1},
			{procs: []fakeProc{init}, exited: true},
		}},
		{"root becomes a zombie", []step{
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 100}}, user: 1.00, procsCount: 1},
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 100, state: "Z"}}, exited: true},
		}},
		{"root PID reused", []step{
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 100}}, user: 1.00, procsCount: 1},
			{procs: []fakeProc{init, {pid: 10, ppid: 1, utime: 1, start: 5}}, exited: true},
		}},
	}
	for _, mode := range []readMode{modeWalk, modeScan} {
		for _, tc := range tests {
			t.Run(mode.String()+"/"+tc.name, func(t *testing.T) {
				fixtureChangesCase(t, mode, tc.steps)
			})
		}
	}
}

// fixtureChangesCase runs one case of TestFixtureChanges with the reader
// in the given mode.
func fixtureChangesCase(t *testing.T, mode readMode, steps []step) {
	root := t.TempDir()
	writeTree(t, root, steps[0].procs...)
	s, err := Start(context.Background(), Config{Root: root, Interval: never, PID: 10, readMode: mode})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	for i, st := range steps {
		if i > 0 {
			writeTree(t, root, st.procs...)
			s.Mark(fmt.Sprintf("step %d", i))
		}
		samples := s.Samples()
		status := s.Status()
		if st.exited {
			if !status.RootExited || status.ExitedAt.IsZero() || len(samples) != i {
				t.Fatalf("step %d: status %+v with %d samples; want the root's exit noticed and %d samples kept", i, status, len(samples), i)
			}
			continue
		}
		if status.RootExited || len(samples) != i+1 {
			t.Fatalf("step %d: status %+v with %d samples; want %d", i, status, len(samples), i+1)
		}
		x := samples[i]
		if !approx(x.CPUUser, st.user) || !approx(x.CPUSystem, st.sys) {
			t.Errorf("step %d: CPU user %v system %v; want %v %v", i, x.CPUUser, x.CPUSystem, st.user, st.sys)
		}
		if x.Processes != st.procsCount {
			t.Errorf("step %d: %d processes, want %d", i, x.Processes, st.procsCount)
		}
		if x.SchedRunNS != st.sched {
			t.Errorf("step %d: sched %d ns, want %d", i, x.SchedRunNS, st.sched)
		}
		if x.PSSUnavailable != st.pssUnavail || (st.pssUnavail && x.PSS != 0) {
			t.Errorf("step %d: PSS %d unavailable %v; want unavailable %v", i, x.PSS, x.PSSUnavailable, st.pssUnavail)
		}
	}
	// After the root's exit Mark only sets the phase.
	n := len(s.Samples())
	s.Mark("after")
	if s.Status().RootExited && len(s.Samples()) != n {
		t.Errorf("Mark sampled after the root exited")
	}
}

// TestIncrementalScan checks that processes found outside the tree are read
// again only at the next full scan, and that a PID reused by a new child of
// the tree meanwhile is found then, with all its CPU.
func TestIncrementalScan(t *testing.T) {
	root := t.TempDir()
	outsider := fakeProc{pid: 20, ppid: 1, utime: 900}
	writeTree(t, root, fakeProc{pid: 1}, fakeProc{pid: 10, ppid: 1, utime: 100}, outsider)
	r, err := newReader(root)
	if err != nil {
		t.Fatal(err)
	}
	r.mode = modeScan // a fixture with children files would be walked
	start, err := r.rootStart(10)
	if err != nil {
		t.Fatal(err)
	}
	var acct cpuAccount
	t0 := time.Now()
	step := func(at time.Duration, wantProcs int, wantUser float64) {
		t.Helper()
		tr, err := r.read(10, start, nil, false, t0.Add(at))
		if err != nil {
			t.Fatal(err)
		}
		acct.update(tr)
		user, _ := acct.seconds()
		if tr.processes != wantProcs || !approx(user, wantUser) {
			t.Errorf("at %v: %d processes, %v s user; want %d, %v", at, tr.processes, user, wantProcs, wantUser)
		}
	}
	step(0, 1, 1.00)
	// PID 20 exits and a new child of 10 gets its number.
	writeTree(t, root, fakeProc{pid: 1}, fakeProc{pid: 10, ppid: 1, utime: 100}, fakeProc{pid: 20, ppid: 10, utime: 30, start: 7777})
	step(time.Second, 1, 1.00)                 // still taken for the outsider
	step(fullScanEvery+time.Second, 2, 1.30)   // found at the full scan, with all its CPU
	step(fullScanEvery+2*time.Second, 2, 1.30) // and read at every tick since
	if _, ok := r.outside[20]; ok {
		t.Errorf("PID 20 still listed as outside the tree")
	}
}

// TestPSSInterval checks that periodic samples read PSS only every
// PSSInterval, while Start and Mark always read it, and that Derive uses
// only the samples that read it.
func TestPSSInterval(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, fakeProc{pid: 1}, fakeProc{pid: 10, ppid: 1, rssPages: 100, pssKB: 300})
	s, err := Start(context.Background(), Config{Root: root, Interval: MinInterval, PSSInterval: time.Hour, PID: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	s.Mark(PhaseLoad)
	deadline := time.Now().Add(10 * time.Second)
	for len(s.Samples()) < 4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	s.Mark(PhaseRecovery)
	samples := s.Stop()
	if len(samples) < 5 {
		t.Fatalf("%d samples in 10 s at %v", len(samples), MinInterval)
	}
	for i, x := range samples {
		mark := i <= 1 || i == len(samples)-1 // Start, Mark(load), Mark(recovery)
		if x.PSSSkipped == mark || (mark && x.PSS != 300*1024) || (!mark && x.PSS != 0) {
			t.Errorf("sample %d (%s): PSS %d skipped %v", i, x.Phase, x.PSS, x.PSSSkipped)
		}
	}
	f := Derive(samples, Window{Phase: PhaseLoad}, 1, 1)
	if f.PSSLoad != 300*1024 || f.PSSPeak != 300*1024 {
		t.Errorf("PSS load %d peak %d, want %d from the Mark samples only", f.PSSLoad, f.PSSPeak, 300*1024)
	}
}

// TestMarkReusesRecentPSS: phase edges within markPSSReuse of a PSS
// reading reuse it (zero-length phases put several edges at one instant);
// a later edge reads PSS again.
func TestMarkReusesRecentPSS(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, fakeProc{pid: 1}, fakeProc{pid: 10, ppid: 1, rssPages: 100, pssKB: 300})
	clock := &testClock{t: time.Now()}
	s, err := Start(context.Background(), Config{Root: root, Interval: time.Hour, PSSInterval: time.Hour, PID: 10, clock: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	// Start read PSS (300 KiB); the tree's PSS changes at once.
	writeTree(t, root, fakeProc{pid: 1}, fakeProc{pid: 10, ppid: 1, rssPages: 100, pssKB: 500})
	s.Mark(PhaseBaseline)
	s.Mark(PhaseLoad)
	clock.advance(markPSSReuse + 20*time.Millisecond)
	s.Mark(PhaseRecovery)
	samples := s.Stop()
	if len(samples) != 4 {
		t.Fatalf("%d samples, want Start and 3 marks", len(samples))
	}
	for i, want := range []uint64{300, 300, 300, 500} {
		if x := samples[i]; x.PSSSkipped || x.PSS != want*1024 {
			t.Errorf("sample %d (%s): PSS %d KiB skipped %v, want %d KiB", i, x.Phase, x.PSS/1024, x.PSSSkipped, want)
		}
	}
}

// TestPeriodicPSSLeftToPlannedMark: a periodic PSS reading due within half
// a PSS interval before the planned end of the phase (MarkUntil) is left to
// that end's mark; without a planned end, or once the planned end has
// passed without its mark, the periodic reading reads PSS.
func TestPeriodicPSSLeftToPlannedMark(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, fakeProc{pid: 1}, fakeProc{pid: 10, ppid: 1, rssPages: 100, pssKB: 300})
	clock := &testClock{t: time.Now()}
	// ticks are driven by the test: a periodic PSS reading is due 1.5 h
	// after the last (PSSInterval less half an Interval).
	s, err := Start(context.Background(), Config{Root: root, Interval: time.Hour, PSSInterval: 2 * time.Hour, PID: 10, clock: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	tick := func() {
		s.mu.Lock()
		_ = s.takeLocked(false)
		s.mu.Unlock()
	}
	clock.advance(time.Minute)
	s.MarkUntil(PhaseLoad, clock.now().Add(2*time.Hour)) // read
	clock.advance(100 * time.Minute)
	tick() // due, but the planned end is 20 min away: left to its mark
	clock.advance(20 * time.Minute)
	s.MarkUntil(PhaseRecovery, time.Time{}) // read
	clock.advance(100 * time.Minute)
	tick()                                               // due, no planned end: read
	s.MarkUntil(PhaseLoad, clock.now().Add(2*time.Hour)) // within markPSSReuse: reused
	clock.advance(130 * time.Minute)
	tick() // due, and the planned end passed without its mark: read
	samples := s.Stop()
	want := []struct {
		phase   string
		skipped bool
	}{{"", false}, {PhaseLoad, false}, {PhaseLoad, true}, {PhaseRecovery, false}, {PhaseRecovery, false}, {PhaseLoad, false}, {PhaseLoad, false}}
	if len(samples) != len(want) {
		t.Fatalf("%d samples, want %d", len(samples), len(want))
	}
	for i, w := range want {
		if x := samples[i]; x.Phase != w.phase || x.PSSSkipped != w.skipped || (!w.skipped && x.PSS != 300*1024) {
			t.Errorf("sample %d: phase %q PSS %d skipped %v, want phase %q skipped %v", i, x.Phase, x.PSS, x.PSSSkipped, w.phase, w.skipped)
		}
	}
}

// TestMarkRereadsPSSWhenRSSMoved: a phase edge within markPSSReuse of a PSS
// reading reads PSS again when the tree's RSS moved since that reading by
// more than pssReuseRSSFraction (memory touched in between).
func TestMarkRereadsPSSWhenRSSMoved(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, fakeProc{pid: 1}, fakeProc{pid: 10, ppid: 1, rssPages: 1000, pssKB: 300})
	clock := &testClock{t: time.Now()} // stopped: every mark is within markPSSReuse
	s, err := Start(context.Background(), Config{Root: root, Interval: time.Hour, PSSInterval: time.Hour, PID: 10, clock: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	// RSS moves by 0.5 %: reused; then by 50 %: read again.
	writeTree(t, root, fakeProc{pid: 1}, fakeProc{pid: 10, ppid: 1, rssPages: 1005, pssKB: 400})
	s.Mark(PhaseBaseline)
	writeTree(t, root, fakeProc{pid: 1}, fakeProc{pid: 10, ppid: 1, rssPages: 1500, pssKB: 2300})
	s.Mark(PhaseLoad)
	samples := s.Stop()
	if len(samples) != 3 {
		t.Fatalf("%d samples, want Start and 2 marks", len(samples))
	}
	for i, want := range []uint64{300, 300, 2300} {
		if x := samples[i]; x.PSSSkipped || x.PSS != want*1024 {
			t.Errorf("sample %d (%s): PSS %d KiB skipped %v, want %d KiB", i, x.Phase, x.PSS/1024, x.PSSSkipped, want)
		}
	}
}

// TestNoPSS: with NoPSS no sample reads PSS, marks included, and the PSS
// figures are missing.
func TestNoPSS(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, fakeProc{pid: 1}, fakeProc{pid: 10, ppid: 1, rssPages: 100, pssKB: 300})
	s, err := Start(context.Background(), Config{Root: root, Interval: time.Hour, PID: 10, NoPSS: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Mark(PhaseLoad)
	s.Mark(PhaseRecovery)
	samples := s.Stop()
	for i, x := range samples {
		if !x.PSSSkipped || x.PSS != 0 || x.RSS == 0 {
			t.Errorf("sample %d (%s): PSS %d skipped %v RSS %d", i, x.Phase, x.PSS, x.PSSSkipped, x.RSS)
		}
	}
	f := Derive(samples, Window{Phase: PhaseLoad}, 1, 1)
	if f.PSSPeak != 0 || !slices.Contains(f.Missing, "pss_peak_bytes") || f.RSSPeak == 0 {
		t.Errorf("figures %+v: want RSS only, PSS missing", f)
	}
}

// TestAlsoRoots: a further root (Config.Also, a sidecar beside a server)
// and its children are sampled with the root's tree; another process is
// not, and the further root's exit only removes it.
func TestAlsoRoots(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, fakeProc{pid: 1}, fakeProc{pid: 10, ppid: 1, utime: 100},
		fakeProc{pid: 30, ppid: 1, utime: 50}, fakeProc{pid: 31, ppid: 30, utime: 20}, fakeProc{pid: 40, ppid: 1, utime: 900})
	r, err := newReader(root)
	if err != nil {
		t.Fatal(err)
	}
	start, _ := r.rootStart(10)
	sidecar, _ := r.rootStart(30)
	tr, err := r.read(10, start, map[int]uint64{30: sidecar}, false, time.Now())
	if err != nil || tr.rootGone || tr.processes != 3 {
		t.Fatalf("tree %+v, %v: want 10, 30 and 31", tr.procs, err)
	}
	writeTree(t, root, fakeProc{pid: 1}, fakeProc{pid: 10, ppid: 1, utime: 100}, fakeProc{pid: 40, ppid: 1, utime: 900})
	tr, err = r.read(10, start, map[int]uint64{30: sidecar}, false, time.Now().Add(fullScanEvery))
	if err != nil || tr.rootGone || tr.processes != 1 {
		t.Fatalf("after the sidecar's exit: tree %+v, %v", tr.procs, err)
	}
}

// testClock is a clock the test moves: the sampler's PSS decisions then
// depend on the test's steps, not on how fast a loaded machine ran them.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
