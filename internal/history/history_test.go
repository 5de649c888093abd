package history

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/changepoint"
	"github.com/benchrig/benchrig/internal/history/synth"
	"github.com/benchrig/benchrig/internal/plan"
	"github.com/benchrig/benchrig/internal/result"
)

// stepOptions are 30 runs whose requests/s step up 10 % at run 20.
var stepOptions = synth.Options{Runs: 30, Seed: 7, StepAt: 20, StepPct: 10}

// writeRuns writes n seeded synthetic verified results files (o.Runs = n).
func writeRuns(t testing.TB, o synth.Options) []string {
	t.Helper()
	paths, err := synth.Write(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// opener opens the database under test; each call is a new handle on
// the same database.
type opener func(t *testing.T) *Store

func sqliteOpener(t *testing.T) opener {
	path := filepath.Join(t.TempDir(), "history.db")
	return func(t *testing.T) *Store {
		t.Helper()
		s, err := OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

func testCtx(t *testing.T) context.Context {
	// a hang guard only: the tests assert no time.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func addAll(t *testing.T, s *Store, paths []string, branch string) (added, already int) {
	t.Helper()
	for _, p := range paths {
		a, err := s.Add(testCtx(t), p, AddOptions{Replan: plan.RecordedEntries, Branch: branch})
		if err != nil {
			t.Fatal(err)
		}
		if a.Already {
			already++
		} else {
			added++
		}
	}
	return added, already
}

func TestHistorySQLite(t *testing.T) { testHistory(t, sqliteOpener(t)) }

// testHistory is the store's behaviour on one backend: 30 runs added in
// reverse order come back as 30 points in time order with the medians the
// files were made with; a second add adds nothing; a tampered file is
// refused naming the file and the reason; remove and export.
func testHistory(t *testing.T, open opener) {
	ctx := testCtx(t)
	paths := writeRuns(t, stepOptions)
	s := open(t)
	rev := make([]string, len(paths))
	for i, p := range paths {
		rev[len(paths)-1-i] = p
	}
	if added, already := addAll(t, s, rev, ""); added != 30 || already != 0 {
		t.Fatalf("first add: %d added, %d already", added, already)
	}
	if added, already := addAll(t, s, paths, ""); added != 0 || already != 30 {
		t.Fatalf("second add: %d added, %d already imported", added, already)
	}
	runs, err := s.Runs(ctx)
	if err != nil || len(runs) != 30 {
		t.Fatalf("runs: %d, %v", len(runs), err)
	}
	f, _ := FigureNamed("req/s")
	series, err := s.Series(ctx, f, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(series) != 2 { // one target × two connection levels
		t.Fatalf("%d series, want 2", len(series))
	}
	for _, sr := range series {
		if len(sr.Points) != 30 {
			t.Fatalf("series %s: %d points", sr.Cell, len(sr.Points))
		}
		level := 1.0 // synth: the plan's cell c runs at Base×(1+c/4)
		if strings.Contains(sr.Cell, "c=16") {
			level = 1.25
		}
		for i, p := range sr.Points {
			if i > 0 && !p.Started.After(sr.Points[i-1].Started) {
				t.Fatalf("point %d not after point %d", i, i-1)
			}
			if want := 10000 * level * stepOptions.Factor(i); math.Abs(p.Median-want) > 1e-9*want || p.N != 3 || p.Min >= p.Median || p.Max <= p.Median {
				t.Fatalf("%s run %d: median %v [%v–%v] of %d, want %v", sr.Cell, i, p.Median, p.Min, p.Max, p.N, want)
			}
		}
	}
	// the detector sees the medians; the change it finds at run 20 is
	// marked on that run's line with its size and p, and nowhere else.
	var out bytes.Buffer
	var seen []float64
	if err := Show(&out, series[:1], func(m []float64) []changepoint.Point { seen = m; return DetectChanges(m) }); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(seen) != 30 || len(lines) != 31 || !strings.Contains(lines[21], ChangeMarker+" +10.0 % [") || !strings.Contains(lines[21], "p = ") ||
		strings.Count(out.String(), ChangeMarker) != 1 {
		t.Fatalf("show with a change at 20:\n%s", out.String())
	}

	// a tampered file: refused, naming the file and verify's reason.
	data, _ := os.ReadFile(paths[3])
	bad := filepath.Join(t.TempDir(), "tampered.json")
	os.WriteFile(bad, bytes.Replace(data, []byte(`"requests":`), []byte(`"requests": `), 1), 0o644)
	_, err = s.Add(ctx, bad, AddOptions{Replan: plan.RecordedEntries})
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("tampered file: %v", err)
	}

	// export gives the file back byte for byte, and it verifies.
	var exp bytes.Buffer
	if err := s.Export(ctx, runs[5].ID, &exp); err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(paths[5])
	if !bytes.Equal(exp.Bytes(), orig) {
		t.Fatalf("export of run %d differs from %s", runs[5].ID, paths[5])
	}
	if c := result.CheckReader("exported", &exp, plan.RecordedEntries); !c.Report.OK() {
		t.Fatalf("export does not verify: %v", c.Report.Problems)
	}

	// remove: the run leaves every series, recorded with its reason.
	if err := s.Remove(ctx, runs[0].ID, "flaky runner"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(ctx, runs[0].ID, "again"); err == nil {
		t.Fatal("removing a removed run succeeded")
	}
	var reason string
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT reason FROM removed WHERE run_id = ?`), runs[0].ID).Scan(&reason); err != nil || reason != "flaky runner" {
		t.Fatalf("removed: %q, %v", reason, err)
	}
	if series, _ = s.Series(ctx, f, Filter{Cell: series[0].Cell}); len(series) != 1 || len(series[0].Points) != 29 {
		t.Fatalf("after remove: %d series", len(series))
	}
	var n int
	s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM samples WHERE run_id = ?`), runs[0].ID).Scan(&n)
	if n != 0 {
		t.Fatalf("%d samples of the removed run remain", n)
	}
}

// TestHistoryHosts: runs of another host fingerprint make their own
// series unless AnyHost; a branch makes its own series.
func TestHistoryHosts(t *testing.T) {
	ctx := testCtx(t)
	s := sqliteOpener(t)(t)
	a := writeRuns(t, synth.Options{Runs: 3, Seed: 1})
	other := synth.Options{Runs: 2, Seed: 2, Start: time.Date(2026, 10, 2, 0, 0, 0, 0, time.UTC),
		Host: &result.Host{CPUModel: "Other CPU", OnlineCPUs: 4, Kernel: "6.12.0"}}
	b := writeRuns(t, other)
	addAll(t, s, a, "")
	addAll(t, s, b, "")
	f, _ := FigureNamed("p99")
	split, _ := s.Series(ctx, f, Filter{Cell: "api/hello/c=4/b=1"})
	mixed, _ := s.Series(ctx, f, Filter{Cell: "api/hello/c=4/b=1", AnyHost: true})
	if len(split) != 2 || len(mixed) != 1 || len(mixed[0].Points) != 5 || mixed[0].Host != "" {
		t.Fatalf("split %d series, --any-host %d", len(split), len(mixed))
	}
	c := writeRuns(t, synth.Options{Runs: 2, Seed: 3, Start: time.Date(2026, 10, 3, 0, 0, 0, 0, time.UTC)})
	addAll(t, s, c, "release-1")
	byBranch, _ := s.Series(ctx, f, Filter{Cell: "api/hello/c=4/b=1", Branch: "release-1"})
	if len(byBranch) != 1 || len(byBranch[0].Points) != 2 || byBranch[0].Branch != "release-1" {
		t.Fatalf("branch release-1: %+v", byBranch)
	}
	// a run of a changed suite (5 repeats) goes on the same series, noted.
	addAll(t, s, writeRuns(t, synth.Options{Runs: 1, Seed: 4, Repeats: 5, Start: time.Date(2026, 10, 4, 0, 0, 0, 0, time.UTC)}), "")
	sr, _ := s.Series(ctx, f, Filter{Cell: "api/hello/c=4/b=1", AnyHost: true, Branch: DefaultBranch})
	var out bytes.Buffer
	Show(&out, sr, nil)
	if len(sr) != 1 || len(sr[0].Points) != 6 || strings.Count(out.String(), "(the suite changed)") != 1 || !strings.Contains(out.String(), "any host") {
		t.Fatalf("a changed suite:\n%s", out.String())
	}
}

// TestHistoryConcurrentAdd: importers side by side on one SQLite file
// import every file once.
func TestHistoryConcurrentAdd(t *testing.T) {
	open := sqliteOpener(t)
	paths := writeRuns(t, synth.Options{Runs: 12, Seed: 4})
	var wg sync.WaitGroup
	errs := make(chan error, 3*len(paths))
	for range 3 {
		s := open(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range paths {
				if _, err := s.Add(context.Background(), p, AddOptions{Replan: plan.RecordedEntries}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	runs, err := open(t).Runs(context.Background())
	if err != nil || len(runs) != len(paths) {
		t.Fatalf("%d runs after concurrent adds of %d files: %v", len(runs), len(paths), err)
	}
}

// TestHistoryNewerSchema: a database of a newer schema is refused.
func TestHistoryNewerSchema(t *testing.T) {
	open := sqliteOpener(t)
	s := open(t)
	if _, err := s.db.Exec(`INSERT INTO schema_version (version, applied) VALUES (?, 'later')`, SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	_, err := OpenSQLite(context.Background(), s.where)
	if err == nil || !strings.Contains(err.Error(), "newer benchrig") || !strings.Contains(err.Error(), s.where) {
		t.Fatalf("newer schema: %v", err)
	}
}

// TestHistoryDocMarks: the trends page has a chart per series, each run
// a point over its index, and a band where the hook finds a change.
func TestHistoryDocMarks(t *testing.T) {
	f, _ := FigureNamed("req/s")
	sr := Series{Suite: "s", Cell: "a/c=4", Variant: "a", Host: "h", Branch: "main", Figure: f}
	for i := range 6 {
		v := 100.0
		if i >= 3 {
			v = 110
		}
		sr.Points = append(sr.Points, Point{Run: int64(i + 1), Median: v, Min: v - 1, Max: v + 1, N: 3})
	}
	d := Doc([]Series{sr}, func(m []float64) []changepoint.Point {
		return []changepoint.Point{{Index: 3}, {Index: 99}, {Index: -1}}
	})
	if len(d.Sections) != 1 || len(d.Sections[0].Charts) != 1 {
		t.Fatalf("doc: %+v", d)
	}
	c := d.Sections[0].Charts[0]
	if len(c.Series) != 1 || len(c.Series[0].Points) != 6 || c.Series[0].Points[4].X != 4 || c.Series[0].Points[4].Y != 110 ||
		len(c.Bands) != 1 || c.Bands[0].From != 2.5 || !strings.Contains(c.Title, "change at run 3") {
		t.Fatalf("chart: %+v", c)
	}
}
