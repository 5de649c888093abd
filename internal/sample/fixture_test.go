package sample

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A long interval: fixture tests sample only through Start and Mark.
const never = time.Hour

// startFixture starts a sampler on the fixture tree at root and stops it at
// the end of the test.
func startFixture(t *testing.T, root string, pid int) *Sampler {
	t.Helper()
	s, err := Start(context.Background(), Config{Root: root, Interval: never, PID: pid})
	if err != nil {
		t.Fatalf("Start(root %s, pid %d): %v", root, pid, err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestFixtureTree reads the checked-in fake /proc and checks every figure
// of one sample against the numbers written in its files.
func TestFixtureTree(t *testing.T) {
	page := uint64(os.Getpagesize())
	tests := []struct {
		name                string
		pid                 int
		userTicks, sysTicks float64
		rssPages, pssKB     uint64
		threads, procs      int
		schedNS             uint64
	}{
		{
			// 100 ─┬─ 101
			//      ├─ 102 ── 104 ("worker (x) y": parentheses in comm)
			//      └─ 105 (zombie: CPU counts, nothing else)
			// 1, 200: outside the tree; 300: listed but without files.
			name:      "postgres tree",
			pid:       100,
			userTicks: (500 + 40) + 20 + 300 + 7 + 9,
			sysTicks:  (100 + 10) + 30 + 50 + 3 + 1,
			rssPages:  2048 + 512 + 1024 + 256,
			pssKB:     4000 + 1000 + 2000 + 600,
			threads:   1 + 1 + 2 + 1,
			procs:     4,
			schedNS:   6000000000 + 500000000 + (3000000000 + 500000000) + 100000000,
		},
		{
			name:      "subtree",
			pid:       102,
			userTicks: 300 + 7,
			sysTicks:  50 + 3,
			rssPages:  1024 + 256,
			pssKB:     2000 + 600,
			threads:   2 + 1,
			procs:     2,
			schedNS:   3000000000 + 500000000 + 100000000,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startFixture(t, "testdata/proc", tc.pid)
			s.Mark(PhaseLoad)
			got := s.Stop()
			if len(got) != 2 {
				t.Fatalf("got %d samples, want 2 (Start and Mark): %+v", len(got), got)
			}
			first, x := got[0], got[1]
			if first.Phase != "" || x.Phase != PhaseLoad {
				t.Errorf("phases %q, %q; want \"\", %q", first.Phase, x.Phase, PhaseLoad)
			}
			if !approx(x.CPUUser, tc.userTicks/100) || !approx(x.CPUSystem, tc.sysTicks/100) {
				t.Errorf("CPU user %v system %v; want %v %v", x.CPUUser, x.CPUSystem, tc.userTicks/100, tc.sysTicks/100)
			}
			if x.CPUUser != first.CPUUser || x.CPUSystem != first.CPUSystem {
				t.Errorf("CPU changed on an unchanged tree: %+v then %+v", first, x)
			}
			if x.RSS != tc.rssPages*page {
				t.Errorf("RSS %d, want %d", x.RSS, tc.rssPages*page)
			}
			if x.PSS != tc.pssKB*1024 || x.PSSUnavailable {
				t.Errorf("PSS %d (unavailable %v), want %d", x.PSS, x.PSSUnavailable, tc.pssKB*1024)
			}
			if x.Threads != tc.threads || x.Processes != tc.procs {
				t.Errorf("threads %d processes %d; want %d %d", x.Threads, x.Processes, tc.threads, tc.procs)
			}
			if x.SchedRunNS != tc.schedNS || x.SchedUnavailable {
				t.Errorf("sched %d (unavailable %v), want %d", x.SchedRunNS, x.SchedUnavailable, tc.schedNS)
			}
			if x.Offset < first.Offset || x.Time.Location() != time.UTC {
				t.Errorf("offsets %v then %v, time zone %v", first.Offset, x.Offset, x.Time.Location())
			}
			if st := s.Status(); st.RootExited || st.Errors != 0 {
				t.Errorf("status %+v", st)
			}
		})
	}
}

// fakeProc is one process of a fake /proc written by writeTree.
type fakeProc struct {
	pid, ppid       int
	state           string // "" means S
	utime, stime    int
	cutime, cstime  int
	start           int // 0 means 1000+pid
	rssPages, pssKB int
	noRollup        bool
	sched           map[int]uint64 // TID → run ns; nil means {pid: 0}
	threads         int            // 0 means len(sched)
}

// writeTree replaces the fake /proc at root with procs.
func writeTree(t *testing.T, root string, procs ...fakeProc) {
	t.Helper()
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	kids := make(map[int]string)
	for _, p := range procs {
		kids[p.ppid] += fmt.Sprint(p.pid) + " "
	}
	for _, p := range procs {
		dir := filepath.Join(root, fmt.Sprint(p.pid))
		state, start, sched := p.state, p.start, p.sched
		if state == "" {
			state = "S"
		}
		if start == 0 {
			start = 1000 + p.pid
		}
		if sched == nil {
			sched = map[int]uint64{p.pid: 0}
		}
		threads := p.threads
		if threads == 0 {
			threads = len(sched)
		}
		stat := fmt.Sprintf("%d (fake %d) %s %d %d %d 0 -1 0 0 0 0 0 %d %d %d %d 20 0 %d 0 %d 1000000 %d 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
			p.pid, p.pid, state, p.ppid, p.pid, p.pid, p.utime, p.stime, p.cutime, p.cstime, threads, start, p.rssPages)
		write(t, filepath.Join(dir, "stat"), stat)
		if !p.noRollup {
			write(t, filepath.Join(dir, "smaps_rollup"), fmt.Sprintf("0-0 ---p 00000000 00:00 0 [rollup]\nRss: %d kB\nPss: %d kB\n", p.rssPages*4, p.pssKB))
		}
		for tid, ns := range sched {
			write(t, filepath.Join(dir, "task", fmt.Sprint(tid), "schedstat"), fmt.Sprintf("%d 0 0\n", ns))
			// The children files, as the kernel's: the leader's lists them.
			children := ""
			if tid == p.pid || len(sched) == 1 {
				children = kids[p.pid]
			}
			write(t, filepath.Join(dir, "task", fmt.Sprint(tid), "children"), children)
			if tid == p.pid {
				write(t, filepath.Join(dir, "schedstat"), fmt.Sprintf("%d 0 0\n", ns))
			}
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStartErrors checks that bad configurations and missing processes are
// refused with an error naming what is wrong.
func TestStartErrors(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, fakeProc{pid: 1}, fakeProc{pid: 10, ppid: 1, state: "Z"})
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"interval too short", Config{Root: root, PID: 1, Interval: 50 * time.Millisecond}, "interval 50ms is too short"},
		{"negative interval", Config{Root: root, PID: 1, Interval: -time.Second}, "interval -1s"},
		{"negative PSS interval", Config{Root: root, PID: 1, PSSInterval: -time.Second}, "pss_interval -1s is negative"},
		{"no pid", Config{Root: root}, "pid 0 is not a process id"},
		{"negative pid", Config{Root: root, PID: -3}, "pid -3"},
		{"missing root", Config{Root: filepath.Join(root, "nope"), PID: 1}, "open procfs at"},
		{"missing process", Config{Root: root, PID: 4242}, "root process 4242"},
		{"zombie process", Config{Root: root, PID: 10}, "root process 10 has already exited"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Start(context.Background(), tc.cfg)
			if err == nil {
				s.Stop()
				t.Fatalf("Start(%+v) succeeded, want an error containing %q", tc.cfg, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Start(%+v) = %q, want it to contain %q", tc.cfg, err, tc.want)
			}
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, Config{Root: root, PID: 1}); err == nil {
		t.Errorf("Start with a cancelled context succeeded")
	}
}

// TestConfigDefaults checks that zero fields take their defaults.
func TestConfigDefaults(t *testing.T) {
	got, err := Config{PID: 1}.resolved()
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.PID = 1
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resolved %+v, want %+v", got, want)
	}
}

// TestStopIdempotent checks that Stop can be called twice and from several
// goroutines, and that the context ends sampling too.
func TestStopIdempotent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, Config{Root: "testdata/proc", Interval: MinInterval, PID: 100})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	done := make(chan []Sample, 2)
	go func() { done <- s.Stop() }()
	go func() { done <- s.Stop() }()
	a, b := <-done, <-done
	if len(a) == 0 || len(a) != len(b) {
		t.Errorf("Stop returned %d and %d samples", len(a), len(b))
	}
	s.Mark("late")
	if n := len(s.Samples()); n != len(a) {
		t.Errorf("Mark after Stop added a sample: %d, was %d", n, len(a))
	}
}
