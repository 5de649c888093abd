package history

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/history/synth"
	"github.com/benchrig/benchrig/internal/plan"
)

// On SQLite and PostgreSQL, a series of 25 runs whose requests/s fall 10 %
// at run 20 (latency up): run 20, checked against the 20 before it, is a
// regression by both default gates; run 10 is not; run 24, after more runs at the new level,
// is tested only against the runs since the change point the detector
// finds at 20, and is not a regression. A gate that points the way a
// figure gets better is refused.
func TestCheckSQLite(t *testing.T) { testCheck(t, sqliteOpener(t)(t)) }

func TestCheckPostgres(t *testing.T) { testCheck(t, pgOpener(t)(t)) }

func testCheck(t *testing.T, s *Store) {
	ctx := testCtx(t)
	paths := writeRuns(t, synth.Options{Runs: 25, Seed: 11, StepAt: 20, StepPct: -10})
	addAll(t, s, paths[:21], "")
	o := CheckOptions{Window: 20, Alpha: 0.05}
	check := func(run int64) (all, bad []CheckedGate) {
		t.Helper()
		all, bad, err := s.Check(ctx, run, o)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteChecked(&b, all); err != nil {
			t.Fatal(err)
		}
		t.Logf("run %d:\n%s", run, b.String())
		return all, bad
	}
	runID := func(i int) int64 {
		t.Helper()
		a, err := s.Add(ctx, paths[i], AddOptions{Replan: plan.RecordedEntries})
		if err != nil || !a.Already {
			t.Fatalf("run file %d: %+v, %v; want already imported", i, a, err)
		}
		return a.Run
	}
	all, bad := check(runID(20))
	if len(all) == 0 || len(bad) != len(all) {
		t.Errorf("run 20 (10 %% fewer req/s): %d of %d gated series regressed, want all", len(bad), len(all))
	}
	for _, g := range []string{"req/s < -5%", "p99 > +5%"} {
		found := false
		for _, b := range bad {
			found = found || b.Gate == g
		}
		if !found {
			t.Errorf("run 20: gate %q did not fail", g)
		}
	}
	if _, bad := check(runID(10)); len(bad) != 0 {
		t.Errorf("run 10 (no change): %d regressions: %+v", len(bad), bad)
	}
	addAll(t, s, paths[21:], "")
	all, bad = check(runID(24))
	if len(bad) != 0 {
		t.Errorf("run 24 (the new level since run 20): %d regressions: %+v", len(bad), bad)
	}
	for _, c := range all {
		if c.Verdict.Runs != 4 {
			t.Errorf("run 24, %s: tested against %d runs, want the 4 since the change point at run 20", c.Gate, c.Verdict.Runs)
		}
	}
	if _, first := check(runID(0)); len(first) != 0 {
		t.Errorf("run 0, the first: %d regressions", len(first))
	}
	for _, g := range []string{"req/s > +5%", "p99 < -5%", "client-us > +5%"} {
		o := o
		o.Gates = []string{g}
		if _, _, err := s.Check(ctx, runID(24), o); err == nil || !strings.Contains(err.Error(), g) {
			t.Errorf("gate %q: %v, want it refused by name", g, err)
		}
	}
}

// TestEnvName: what --db-env accepts, at its bounds.
func TestEnvName(t *testing.T) {
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{"BENCHRIG_HISTORY_DSN", true}, {"_x", true}, {"a", true}, {"a1", true}, {strings.Repeat("A", 128), true},
		{"", false}, {strings.Repeat("A", 129), false}, {"1ABC", false}, {"A-B", false}, {"A B", false},
		{"postgres://u:p@h/db", false}, {"ÄB", false},
	} {
		if got := envName(tc.s); got != tc.ok {
			t.Errorf("envName(%q) = %v, want %v", tc.s, got, tc.ok)
		}
	}
}
