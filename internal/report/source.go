package report

import (
	"fmt"
	"math"
	"sort"

	"github.com/benchrig/benchrig/internal/result"
)

// Source is one results file as the report builders see it: what produced
// it, its samples placed in rows, and what the reader must be warned of.
// The command layer reads the file (a suite's results, or the document of
// a quick run) and fills it; builders never read files.
type Source struct {
	// Path is the file's name as the user gave it.
	Path string
	// Kind is "suite", "quick" or "quick-matrix".
	Kind string
	// Title names what ran: the suite's name, or the quick command.
	Title string
	Tool  result.Tool
	Host  *result.Host
	// Meta are further facts about the file (the suite's checksum, the
	// overrides, the arguments, the footer's checksum).
	Meta []KV
	// Notice is the file's verification notice (result.Report.Notice):
	// every output of the file shows it first; nil for a file that
	// verifies.
	Notice []string
	// Notes are warnings about the whole file (incomplete, smoke).
	Notes []string
	Rows  []Row
	// Targets are the systems under test by name, with their provenance.
	Targets map[string]result.Provenance
	// Floor is benchrig's own floor measured before the run (nil: none).
	Floor *result.Floor
	// Search is a capacity search's plan (nil for a run of set rates):
	// the rows are its steps.
	Search *result.SearchPlan
}

// metric is one figure of a sample, as tables, charts and comparisons
// show it.
type metric struct {
	name   string
	unit   string
	format string // of one value, without the unit
	// better is +1 when a larger value is better, -1 when smaller is,
	// 0 when neither (a server using more cores is not worse by itself).
	better int
	get    func(*result.Sample) (float64, bool)
}

func loadOK(s *result.Sample) bool { return s.Load != nil && s.Error == "" }

// latencyMetric is a percentile of the headline latency in ms.
func latencyMetric(q float64) metric {
	name := fmt.Sprintf("p%g", q)
	return metric{name: name, unit: "ms", format: "%.2f", better: -1, get: func(s *result.Sample) (float64, bool) {
		if !loadOK(s) || s.Load.Latency.Count == 0 {
			return 0, false
		}
		us := s.Load.Latency.P(q)
		return float64(us) / 1000, us >= 0
	}}
}

var (
	mReqPerSec = metric{name: "Requests/s", unit: "req/s", format: "%.0f", better: +1, get: func(s *result.Sample) (float64, bool) {
		if !loadOK(s) {
			return 0, false
		}
		return s.Load.RequestsPerSec, true
	}}
	mP50, mP90, mP99, mP999 = latencyMetric(50), latencyMetric(90), latencyMetric(99), latencyMetric(99.9)
	mMax                    = metric{name: "max", unit: "ms", format: "%.2f", better: -1, get: func(s *result.Sample) (float64, bool) {
		if !loadOK(s) || s.Load.Latency.Count == 0 {
			return 0, false
		}
		return float64(s.Load.Latency.MaxUS) / 1000, true
	}}
	mServerCores = metric{name: "Server cores", unit: "cores", format: "%.2f", get: func(s *result.Sample) (float64, bool) {
		sv := s.HeadlineServer()
		if sv == nil || sv.Figures.WindowSeconds == 0 {
			return 0, false
		}
		return sv.Figures.Cores, true
	}}
	mServerUS = metric{name: "Server µs/request", unit: "µs", format: "%.1f", better: -1, get: func(s *result.Sample) (float64, bool) {
		sv := s.HeadlineServer()
		if sv == nil || sv.Figures.MicrosPerRequest == 0 {
			return 0, false
		}
		return sv.Figures.MicrosPerRequest, true
	}}
	mPeakMiB = metric{name: "Server peak MiB", unit: "MiB", format: "%.1f", better: -1, get: func(s *result.Sample) (float64, bool) {
		sv := s.HeadlineServer()
		if sv == nil || sv.Figures.RSSPeak == 0 {
			return 0, false
		}
		f := sv.Figures
		if f.PSSPeak > 0 {
			return float64(f.PSSPeak) / (1 << 20), true
		}
		return float64(f.RSSPeak) / (1 << 20), true
	}}
	mClientCores = metric{name: "Client cores", unit: "cores", format: "%.2f", get: func(s *result.Sample) (float64, bool) {
		if !loadOK(s) || s.Load.Seconds == 0 {
			return 0, false
		}
		return s.Load.Client.Cores, true
	}}
	mClientUS = metric{name: "Client µs/request", unit: "µs", format: "%.1f", better: -1, get: func(s *result.Sample) (float64, bool) {
		if !loadOK(s) || s.Load.Client.CPUPerRequestUS == 0 {
			return 0, false
		}
		return s.Load.Client.CPUPerRequestUS, true
	}}
	// mMisses is the share of reads that missed (result.Load.MissRatio).
	mMisses = metric{name: "Misses", unit: "% of reads", format: "%.3g", better: -1, get: func(s *result.Sample) (float64, bool) {
		if !loadOK(s) {
			return 0, false
		}
		return s.Load.MissRatio() * 100, true
	}}
	mCoverage = metric{name: "Coverage", unit: "%", format: "%.1f", better: +1, get: func(s *result.Sample) (float64, bool) {
		if !loadOK(s) || s.Load.Rate == nil {
			return 0, false
		}
		return s.Load.Rate.Coverage, true
	}}
)

// values are the finite values of m over the samples, sorted.
func (m metric) values(ss []*result.Sample) []float64 {
	var v []float64
	for _, s := range ss {
		if x, ok := m.get(s); ok && !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	sort.Float64s(v)
	return v
}

// cell renders m over the samples as median [min–max] ("–" when none has
// it).
func (m metric) cell(ss []*result.Sample) string {
	return medianRange(ss, m.get, m.format)
}

// point is m over the samples as a chart point: the median with the
// min–max whisker.
func (m metric) point(ss []*result.Sample) Point {
	v := m.values(ss)
	if len(v) == 0 {
		return Point{Missing: true}
	}
	return Point{Y: median(v), Lo: v[0], Hi: v[len(v)-1]}
}

// grid groups rows by case and variant, keeping the order of first
// appearance.
type grid struct {
	cases, variants []string
	cell            map[[2]string][]*result.Sample
}

func newGrid(rows []Row) *grid {
	g := &grid{cell: map[[2]string][]*result.Sample{}}
	g.cases, g.variants = order(rows)
	for _, r := range rows {
		k := [2]string{r.Case, r.Variant}
		g.cell[k] = append(g.cell[k], r.Sample)
	}
	return g
}

func (g *grid) at(c, v string) []*result.Sample { return g.cell[[2]string{c, v}] }

// bars is a Bars chart of m: one group per case, one series per variant.
func (g *grid) bars(m metric, title string) Chart {
	ch := Chart{Kind: Bars, Title: title, Unit: m.unit, Categories: g.cases}
	for _, v := range g.variants {
		sr := Series{Name: v}
		for _, c := range g.cases {
			sr.Points = append(sr.Points, m.point(g.at(c, v)))
		}
		ch.Series = append(ch.Series, sr)
	}
	return ch
}

// column is a table column that is not one metric: its header and the
// cell of a case and variant's samples.
type column struct {
	name string
	cell func([]*result.Sample) string
}

// byCell is a table with one row per case and variant that has samples and
// one column per metric, then the extra columns.
func (g *grid) byCell(caption string, ms []metric, extra ...column) Table {
	t := Table{Caption: caption, Header: []string{"Case", "Variant"}, Labels: 2}
	for _, m := range ms {
		h := m.name
		if m.unit != "" && m.unit != "cores" && m.unit != "req/s" && m.unit != "µs" && m.unit != "MiB" {
			h += " (" + m.unit + ")"
		}
		t.Header = append(t.Header, h)
	}
	for _, e := range extra {
		t.Header = append(t.Header, e.name)
	}
	for _, c := range g.cases {
		for _, v := range g.variants {
			ss := g.at(c, v)
			if len(ss) == 0 {
				continue
			}
			row := []string{c, v}
			for _, m := range ms {
				row = append(row, m.cell(ss))
			}
			for _, e := range extra {
				row = append(row, e.cell(ss))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// healthy is the "Healthy" column: healthy samples of all ("2/3").
var healthy = column{"Healthy", func(ss []*result.Sample) string {
	n := 0
	for _, s := range ss {
		if s.Error == "" && s.Verdict.Healthy {
			n++
		}
	}
	return fmt.Sprintf("%d/%d", n, len(ss))
}}
