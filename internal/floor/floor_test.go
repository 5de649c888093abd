package floor

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
)

// TestCalibrateRefusesBadFlags: a duration out of bounds or an unknown
// protocol is a usage error, before anything is measured.
func TestCalibrateRefusesBadFlags(t *testing.T) {
	var u exitcode.UsageError
	for _, tc := range []struct {
		d         time.Duration
		protocols []string
		conns     []int
		want      string
	}{
		{10 * time.Millisecond, []string{"http"}, []int{1}, "--duration must be between 100ms and 1m0s, got 10ms"},
		{time.Second, []string{"h3"}, []int{1}, `--protocols: unknown protocol "h3"; accepted: http, pg, resp`},
		{time.Second, []string{"http"}, []int{1, 0}, "--connections: each count must be between 1 and 256, got 0"},
		{time.Second, []string{"http"}, []int{257}, "--connections: each count must be between 1 and 256, got 257"},
		{time.Second, []string{"http"}, nil, "--connections: give 1 to 8 connection counts, got 0"},
	} {
		err := Calibrate(context.Background(), io.Discard, tc.d, tc.protocols, tc.conns, false, false)
		if err == nil || err.Error() != tc.want || !errors.As(err, &u) {
			t.Errorf("%s %v: %v, want the usage error %q", tc.d, tc.protocols, err, tc.want)
		}
	}
}

// TestBeforeRunSkipped: --no-calibrate records that it skipped the floor.
func TestBeforeRunSkipped(t *testing.T) {
	if f := BeforeRun(context.Background(), nil, true, false, nil); f == nil || f.Skipped != "--no-calibrate" || len(f.Protocols) != 0 {
		t.Errorf("skipped floor %+v", f)
	}
}

// TestRunLevels: one connection, then the run's own counts, at most four
// levels in all, each within the null peer's bound.
func TestRunLevels(t *testing.T) {
	for _, tc := range []struct{ in, want []int }{
		{nil, []int{1}},
		{[]int{10}, []int{1, 10}},
		{[]int{64, 1, 8, 64}, []int{1, 8, 64}},
		{[]int{4, 16, 64, 256, 1000}, []int{1, 4, 64, 256}},
	} {
		if got := RunLevels(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("RunLevels(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestPeerPlace: the calibrate header says where the null peer ran, from
// the entries measured.
func TestPeerPlace(t *testing.T) {
	entry := func(cpus, err string) result.FloorEntry {
		return result.FloorEntry{Protocol: "http", PeerCPUs: cpus, Error: err}
	}
	for _, tc := range []struct {
		entries []result.FloorEntry
		want    string
	}{
		{[]result.FloorEntry{entry("0", ""), entry("0", ""), entry("", "refused")}, "a process of its own on CPU 0, apart from benchrig's"},
		{[]result.FloorEntry{entry("0-3,8", "")}, "a process of its own on CPUs 0-3,8, apart from benchrig's"},
		{[]result.FloorEntry{entry("", "")}, "a process of its own, sharing benchrig's CPUs"},
		{[]result.FloorEntry{entry("0", ""), entry("", "")}, "a process of its own"},
		{nil, "a process of its own"},
	} {
		if got := peerPlace(&result.Floor{Protocols: tc.entries}); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.entries, got, tc.want)
		}
	}
}

// TestBeforeRunPinnedLikeSamples: a suite that pins the client has its
// floor measured pinned there too, the null peer on the other CPUs, and
// benchrig's affinity and GOMAXPROCS are back as they were afterwards.
func TestBeforeRunPinnedLikeSamples(t *testing.T) {
	online, err := proc.ParseCPUList(proc.OnlineCPUs())
	mine, err2 := proc.Affinity(os.Getpid())
	if err != nil || err2 != nil || len(online) < 2 || len(mine) == 0 {
		t.Skipf("needs two online CPUs (online: %s, this process's: %v)", proc.OnlineCPUs(), mine)
	}
	client := mine[len(mine)-1]
	var apart []int
	for _, c := range online {
		if c != client {
			apart = append(apart, c)
		}
	}
	procs := runtime.GOMAXPROCS(0)
	// unpinned, the command's own process measures on the upper half of
	// its CPUs, the peer on the rest
	upper := mine[len(mine)/2:]
	var lower []int
	for _, c := range online {
		if !slices.Contains(upper, c) {
			lower = append(lower, c)
		}
	}
	for _, tc := range []struct {
		name string
		pl   suite.Placement
		own  bool
	}{
		// the suite's client CPUs
		{"client_cpus", suite.Placement{ClientCPUs: suite.CPUList(proc.FormatCPUList([]int{client}))}, false},
		// the samples keep off a pinned target's CPUs
		{"beside a pinned target", suite.Placement{TargetCPUs: suite.CPUList(proc.FormatCPUList(apart))}, false},
		// unpinned, benchrig's command alone in its process
		{"unpinned, own process", suite.Placement{}, true},
	} {
		if tc.pl.TargetCPUs != "" && len(mine) != len(online) {
			continue // the client's CPUs beside the target are not just the one
		}
		want := apart
		if tc.own {
			want = lower
		}
		p := &suite.Plan{
			Suite: &suite.Suite{Placement: tc.pl, Targets: map[string]*suite.Target{"app": {}}},
			Cells: []suite.Cell{{Protocol: "http", Connections: 2, Target: "app"}},
		}
		f := BeforeRun(context.Background(), p, false, tc.own, nil)
		if len(f.Protocols) != 2 {
			t.Fatalf("%s: floor %+v: want http at 1 and 2 connections", tc.name, f)
		}
		for _, e := range f.Protocols {
			if e.Error != "" || e.PeerCPUs != proc.FormatCPUList(want) {
				t.Errorf("%s: entry %+v: want the null peer on CPUs %s", tc.name, e, proc.FormatCPUList(want))
			}
		}
		if after, err := proc.Affinity(os.Getpid()); err != nil || proc.FormatCPUList(after) != proc.FormatCPUList(mine) || runtime.GOMAXPROCS(0) != procs {
			t.Errorf("%s: after: affinity %v (was %v), GOMAXPROCS %d (was %d)", tc.name, after, mine, runtime.GOMAXPROCS(0), procs)
		}
	}
}
