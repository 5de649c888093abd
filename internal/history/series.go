package history

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Figure is one figure a series follows.
type Figure struct {
	// Name is as --figure takes it.
	Name string
	// column holds it in the samples table.
	column string
	// Unit and Scale: a stored value times Scale is shown in Unit.
	Unit  string
	Scale float64
	// Higher is true when more is better (requests/s).
	Higher bool
}

// Figures are the figures a series may follow, in the order -o draws them
// by default (the first four) and --figure lists them.
var Figures = []Figure{
	{Name: "req/s", column: "req_per_sec", Unit: "req/s", Scale: 1, Higher: true},
	{Name: "p99", column: "p99_us", Unit: "ms", Scale: 1e-3},
	{Name: "server-us", column: "server_us_per_req", Unit: "µs/request", Scale: 1},
	{Name: "peak-mem", column: "peak_mem_bytes", Unit: "MiB", Scale: 1.0 / (1 << 20)},
	{Name: "p50", column: "p50_us", Unit: "ms", Scale: 1e-3},
	{Name: "p90", column: "p90_us", Unit: "ms", Scale: 1e-3},
	{Name: "max", column: "max_us", Unit: "ms", Scale: 1e-3},
	{Name: "client-cpu", column: "client_cores", Unit: "cores", Scale: 1},
	{Name: "errors", column: "errors", Unit: "errors", Scale: 1},
}

// FigureNamed finds a figure by its --figure name.
func FigureNamed(name string) (Figure, error) {
	var names []string
	for _, f := range Figures {
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	return Figure{}, fmt.Errorf("--figure %q: accepted %s", name, strings.Join(names, ", "))
}

// Filter selects the series to show.
type Filter struct {
	// Suite and Cell, when set, keep only that suite's or cell's samples.
	Suite, Cell string
	// Branch, when set, keeps only that branch's runs.
	Branch string
	// AnyHost puts runs of different host fingerprints in one series;
	// without it they never mix.
	AnyHost bool
}

// Point is one run of a series: the median, least and greatest of the
// figure over the run's repeats of the cell.
type Point struct {
	Run      int64
	Started  time.Time
	Revision string
	Host     string
	// SuiteHash is the SHA-256 of the run's resolved suite: a change
	// means the suite itself changed (phases, thresholds, matrix).
	SuiteHash        string
	Median, Min, Max float64
	// N is the number of repeats with the figure; Values are their values
	// (what a regression test of the run reads).
	N      int
	Values []float64
}

// Series is one figure of one (suite, cell, variant, host fingerprint,
// branch) across runs, ordered by the runs' start times. Host is "" when
// the series mixes hosts (Filter.AnyHost).
type Series struct {
	Suite, Cell, Variant, Host, Branch string
	Figure                             Figure
	Points                             []Point
}

// Medians are the series' per-run medians in time order: what a
// change-point detector reads.
func (s *Series) Medians() []float64 {
	out := make([]float64, len(s.Points))
	for i, p := range s.Points {
		out[i] = p.Median
	}
	return out
}

// Series reads the series of figure f that filter selects, sorted by
// suite, cell, variant, host and branch; each holds its runs in the order
// they started. Failed samples carry no figure and are left out.
func (s *Store) Series(ctx context.Context, f Figure, filter Filter) ([]Series, error) {
	stmt := `SELECT r.id, r.started, r.revision, r.host, r.suite_hash, r.branch, r.suite, s.cell, s.variant, s.` + f.column + `
		FROM samples s JOIN runs r ON r.id = s.run_id
		WHERE s.error = '' AND s.` + f.column + ` IS NOT NULL`
	var args []any
	for _, c := range []struct{ col, v string }{{"r.suite", filter.Suite}, {"s.cell", filter.Cell}, {"r.branch", filter.Branch}} {
		if c.v != "" {
			stmt += " AND " + c.col + " = ?"
			args = append(args, c.v)
		}
	}
	stmt += ` ORDER BY r.started_ns, r.id`
	rows, err := s.db.QueryContext(ctx, s.q(stmt), args...)
	if err != nil {
		return nil, s.errf("%w", err)
	}
	defer rows.Close()
	type key struct{ suite, cell, variant, host, branch string }
	series := map[key]*Series{}
	values := map[key]map[int64][]float64{}
	for rows.Next() {
		var p Point
		var started string
		var k key
		var v float64
		if err := rows.Scan(&p.Run, &started, &p.Revision, &p.Host, &p.SuiteHash, &k.branch, &k.suite, &k.cell, &k.variant, &v); err != nil {
			return nil, s.errf("%w", err)
		}
		p.Started, _ = time.Parse(time.RFC3339Nano, started)
		k.host = p.Host
		if filter.AnyHost {
			k.host = ""
		}
		sr := series[k]
		if sr == nil {
			sr = &Series{Suite: k.suite, Cell: k.cell, Variant: k.variant, Host: k.host, Branch: k.branch, Figure: f}
			series[k], values[k] = sr, map[int64][]float64{}
		}
		if n := len(sr.Points); n == 0 || sr.Points[n-1].Run != p.Run {
			sr.Points = append(sr.Points, p)
		}
		values[k][p.Run] = append(values[k][p.Run], v*f.Scale)
	}
	if err := rows.Err(); err != nil {
		return nil, s.errf("%w", err)
	}
	out := make([]Series, 0, len(series))
	for k, sr := range series {
		for i := range sr.Points {
			p := &sr.Points[i]
			p.Values = values[k][p.Run]
			p.Median, p.Min, p.Max, p.N = summary(p.Values)
		}
		out = append(out, *sr)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return strings.Join([]string{a.Suite, a.Cell, a.Variant, a.Host, a.Branch}, "\x00") <
			strings.Join([]string{b.Suite, b.Cell, b.Variant, b.Host, b.Branch}, "\x00")
	})
	return out, nil
}

// summary is the median, least, greatest and count of vs (not empty).
func summary(vs []float64) (med, lo, hi float64, n int) {
	v := slices.Clone(vs)
	slices.Sort(v)
	n = len(v)
	med = v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return med, v[0], v[n-1], n
}
