package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/benchrig/benchrig/internal/capacity"
	"github.com/benchrig/benchrig/internal/result"
)

// CapacityRow is one searched cell's capacity as the reports show it.
type CapacityRow struct {
	// Cell is the cell's ID; Variant and Case its labels (Case without
	// the rate).
	Cell, Variant, Case string
	// Result is the search replayed from the recorded steps.
	Result capacity.Result
	// Ended is false when the recorded steps stop before the search's
	// end (interrupted, or cut by max_time).
	Ended bool
	// P99MS and ServerUS are the median p99 (ms) and server CPU µs per
	// request of the samples at the capacity's rate (0: none measured).
	P99MS, ServerUS float64
	// Steps are the cell's samples in the order they ran.
	Steps []*result.Sample
}

// Capacities replays each searched cell's recorded steps into its result
// (a search is deterministic given its steps' verdicts). nil for a run of
// set rates.
func Capacities(src *Source) []CapacityRow {
	if src.Search == nil {
		return nil
	}
	var rows []CapacityRow
	for _, cell := range src.Search.Cells {
		row := CapacityRow{Cell: cell}
		var recorded []result.Sample
		for _, r := range src.Rows {
			if s := r.Sample; s != nil && s.Search != nil && s.Cell == cell {
				row.Steps = append(row.Steps, s)
				recorded = append(recorded, *s)
				if row.Variant == "" {
					row.Variant, row.Case = s.Variant, caseWithoutRate(s.Case)
				}
			}
		}
		// a file whose steps are not the search's does not verify, and
		// its report says so at the top: the replay shows what it has
		res, ended, _ := result.ReplaySearch(src.Search, cell, recorded)
		row.Result, row.Ended = res, ended
		if res.Ended > 0 {
			var p99, us []float64
			for _, s := range row.Steps {
				if s.Search.Rate != res.Median.Rate || s.Error != "" || s.Load == nil {
					continue
				}
				if v, ok := mP99.get(s); ok {
					p99 = append(p99, v)
				}
				if v, ok := mServerUS.get(s); ok {
					us = append(us, v)
				}
			}
			if len(p99) > 0 {
				row.P99MS = medianOf(p99)
			}
			if len(us) > 0 {
				row.ServerUS = medianOf(us)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// caseWithoutRate drops the rate from a case label ("10 conns · 400
// req/s" → "10 conns"): the search chose it.
func caseWithoutRate(c string) string {
	parts := strings.Split(c, " · ")
	out := parts[:0]
	for _, p := range parts {
		if !strings.HasSuffix(p, " req/s") {
			out = append(out, p)
		}
	}
	return strings.Join(out, " · ")
}

// capacityText is a row's capacity: "1414/s", "1414/s [1300/s–1500/s]"
// over several searches, with "(search not ended)" when the steps stop
// short.
func (r CapacityRow) capacityText() string {
	res := r.Result
	var s string
	switch {
	case res.Ended == 0:
		s = "unknown"
		if res.Lo > 0 || res.Hi > 0 || len(res.Searches) > 0 {
			s = "unknown (search not ended)"
		}
		return s
	case res.Ended == 1:
		s = res.Median.String()
	default:
		s = fmt.Sprintf("%s [%s–%s]", res.Median, res.Min, res.Max)
	}
	if !r.Ended {
		s += " (search not ended)"
	}
	return s
}

// aboveText says what the samples one resolution step above said: "0 of
// 3 HEALTHY at 1485/s".
func (r CapacityRow) aboveText() string {
	for _, sr := range r.Result.Searches {
		if sr.Capacity == r.Result.Median && len(sr.Above) > 0 {
			return fmt.Sprintf("%d of %d HEALTHY at %s/s", sr.AboveHealthy, len(sr.Above), capacity.FormatRate(sr.AboveRate))
		}
	}
	return "–"
}

// limitText is the limiting reason, its first clause without the
// details in parentheses: "coverage 77.5 % < 95.0 %".
func (r CapacityRow) limitText() string {
	if len(r.Result.LimitingReason) == 0 {
		return "–"
	}
	t := r.Result.LimitingReason[0]
	if i := strings.Index(t, " ("); i > 0 {
		t = t[:i]
	}
	if n := len(r.Result.LimitingReason); n > 1 {
		t += fmt.Sprintf(" (+%d)", n-1)
	}
	return t
}

func fmtOr(v float64, format string) string {
	if v == 0 || math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf(format, v)
}

// capacityHeader is the capacity table's header.
var capacityHeader = []string{"Variant", "Case", "Capacity", "Above it", "p99 at capacity (ms)", "Server µs/request at capacity", "Limited by", "Steps"}

func (r CapacityRow) cells() []string {
	return []string{r.Variant, r.Case, r.capacityText(), r.aboveText(), fmtOr(r.P99MS, "%.2f"), fmtOr(r.ServerUS, "%.1f"), r.limitText(), fmt.Sprint(len(r.Steps))}
}

// CapacityTable writes the capacity of each searched cell as a terminal
// table.
func CapacityTable(w io.Writer, rows []CapacityRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(capacityHeader, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r.cells(), "\t"))
	}
	return tw.Flush()
}

// capacitySection is a search file's capacity: the table and the
// latency–throughput curve of every step.
func capacitySection(src *Source) (Section, bool) {
	rows := Capacities(src)
	if rows == nil {
		return Section{}, false
	}
	cfg := src.Search.Config
	sec := Section{
		Title: "Capacity",
		Text: []string{fmt.Sprintf("The highest constant arrival rate at which every confirming sample was HEALTHY under the suite's thresholds, "+
			"searched from %s/s to %s/s: a geometric ladder (×%g) to the first UNHEALTHY step, bisection to %g %%, then %d confirming samples at the found rate "+
			"and %d one resolution step above; a fresh target process for every step. Over several searches: median [min–max]. "+
			"\"≥\" means HEALTHY at the search's maximum, \"<\" UNHEALTHY at its start.",
			capacity.FormatRate(cfg.From), capacity.FormatRate(cfg.Max), cfg.Factor, cfg.Resolution*100, cfg.Confirm, cfg.Confirm)},
	}
	t := Table{Caption: "Capacity by variant and case", Header: capacityHeader, Labels: 2}
	p99 := Chart{Kind: Lines, Title: "Latency against the achieved rate (p99 solid, p50 dashed; the median of each offered rate's steps)", Unit: "ms", XUnit: "req/s", LogY: true}
	cpu := Chart{Kind: Lines, Title: "Server CPU per request against the achieved rate", Unit: "µs"}
	for _, r := range rows {
		t.Rows = append(t.Rows, r.cells())
		name := r.Variant
		if r.Case != "" {
			name += " · " + r.Case
		}
		p99s, p50s, cpus := capacityCurves(r.Steps)
		p99.Series = append(p99.Series, Series{Name: name + " p99", Points: p99s}, Series{Name: name + " p50", Points: p50s, Dashed: true})
		if len(cpus) > 0 {
			cpu.Series = append(cpu.Series, Series{Name: name, Points: cpus})
		}
		if r.Result.Ended > 0 && r.Result.Median.Bound == capacity.Exact {
			c := r.Result.Median.Rate
			p99.Bands = append(p99.Bands, Band{Name: "capacity " + capacity.FormatRate(c) + "/s", From: c * 0.995, To: c * 1.005})
		}
	}
	sec.Tables = []Table{t}
	sec.Charts = []Chart{p99}
	if len(cpu.Series) > 0 {
		sec.Charts = append(sec.Charts, cpu)
	}
	return sec, true
}

// CapacityCurve is the latency–throughput chart of a search's steps so far,
// as the Capacity section draws it (p99 solid, p50 dashed, against the
// achieved rate), one pair of series per variant and case in the order
// they first appear: the live page grows it as the steps finish. ok is
// false before any step has a load window.
func CapacityCurve(steps []*result.Sample) (c Chart, ok bool) {
	c = Chart{Kind: Lines, Title: "Latency against the achieved rate (p99 solid, p50 dashed), the steps so far", Unit: "ms", XUnit: "req/s", LogY: true}
	var names []string
	byName := map[string][]*result.Sample{}
	for _, s := range steps {
		if s.Search == nil {
			continue
		}
		name := s.Variant
		if cs := caseWithoutRate(s.Case); cs != "" {
			name += " · " + cs
		}
		if _, seen := byName[name]; !seen {
			names = append(names, name)
		}
		byName[name] = append(byName[name], s)
	}
	for _, name := range names {
		p99s, p50s, _ := capacityCurves(byName[name])
		if len(p99s) == 0 {
			continue
		}
		c.Series = append(c.Series, Series{Name: name + " p99", Points: p99s}, Series{Name: name + " p50", Points: p50s, Dashed: true})
	}
	return c, len(c.Series) > 0
}

// capacityCurves are a cell's p99, p50 and server CPU per request against
// the achieved rate: one point per offered rate (the median of its steps'
// figures), in the order of the rates.
func capacityCurves(steps []*result.Sample) (p99s, p50s, cpus []Point) {
	byRate := map[float64][]*result.Sample{}
	var rates []float64
	for _, s := range steps {
		if !loadOK(s) || s.Load.Seconds <= 0 {
			continue
		}
		if _, ok := byRate[s.Search.Rate]; !ok {
			rates = append(rates, s.Search.Rate)
		}
		byRate[s.Search.Rate] = append(byRate[s.Search.Rate], s)
	}
	slices.Sort(rates)
	for _, rate := range rates {
		var xs, a, b, c []float64
		for _, s := range byRate[rate] {
			xs = append(xs, float64(s.Load.Requests)/s.Load.Seconds)
			if v, ok := mP99.get(s); ok {
				a = append(a, v)
			}
			if v, ok := mP50.get(s); ok {
				b = append(b, v)
			}
			if v, ok := mServerUS.get(s); ok {
				c = append(c, v)
			}
		}
		x := medianOf(xs)
		if len(a) > 0 {
			p99s = append(p99s, Point{X: x, Y: medianOf(a)})
		}
		if len(b) > 0 {
			p50s = append(p50s, Point{X: x, Y: medianOf(b)})
		}
		if len(c) > 0 {
			cpus = append(cpus, Point{X: x, Y: medianOf(c)})
		}
	}
	return p99s, p50s, cpus
}

// capacityCompareDoc compares two capacity searches cell by cell: each
// side's capacity (median [min–max] over its searches), the change of the
// medians from A to B, and whether the two ranges overlap (searches whose
// ranges overlap have not shown a difference).
func capacityCompareDoc(a, b *Source) (*Doc, error) {
	if a.Search == nil || b.Search == nil {
		which := "A"
		if a.Search != nil {
			which = "B"
		}
		return nil, fmt.Errorf("%s is not a capacity search: compare a capacity search with another (benchrig capacity, or a suite's search:)", which)
	}
	d := &Doc{Title: fmt.Sprintf("benchrig compare · capacity · A: %s · B: %s", a.Title, b.Title), Notice: compareNotice(a, b)}
	d.Meta = append(sideMeta("A", a), sideMeta("B", b)...)
	ra, rb := Capacities(a), Capacities(b)
	byCell := map[string]CapacityRow{}
	for _, r := range rb {
		byCell[r.Cell] = r
	}
	t := Table{Caption: "Capacity, A and B", Header: []string{"Cell", "A", "B", "Δ (B vs A)", "Ranges", "Verdict"}, Labels: 1}
	var only []string
	for _, x := range ra {
		y, ok := byCell[x.Cell]
		if !ok {
			only = append(only, "A: "+x.Cell)
			continue
		}
		delete(byCell, x.Cell)
		t.Rows = append(t.Rows, capacityCompareRow(x, y))
	}
	for c := range byCell {
		only = append(only, "B: "+c)
	}
	slices.Sort(only)
	if len(only) > 0 {
		d.Notes = append(d.Notes, "Searched on one side only (not compared): "+strings.Join(only, ", "))
	}
	d.Sections = append(d.Sections, Section{Title: "Capacity, A/B", Text: []string{
		"Each side: the capacity of each searched cell, median [min–max] over its searches. Δ is the change of the medians from A to B; " +
			"where the two ranges overlap the searches have not shown a difference (run more searches, --searches, to narrow them). " +
			"A bound (≥ max, < from) is compared as the bound it is."}, Tables: []Table{t}})
	return d, nil
}

// capacityCompareRow is one cell's A/B row.
func capacityCompareRow(x, y CapacityRow) []string {
	xa, ya := x.Result, y.Result
	if xa.Ended == 0 || ya.Ended == 0 {
		return []string{x.Cell, x.capacityText(), y.capacityText(), "–", "–", "a search did not end"}
	}
	delta := "–"
	if xa.Median.Rate > 0 {
		delta = fmt.Sprintf("%+.1f %%", 100*(ya.Median.Rate/xa.Median.Rate-1))
	}
	overlap := !(ya.Min.Rate > xa.Max.Rate || xa.Min.Rate > ya.Max.Rate)
	ranges, verdict := "overlap", "no difference shown"
	switch {
	case overlap:
	case ya.Min.Rate > xa.Max.Rate:
		ranges, verdict = "apart", "B holds more"
	default:
		ranges, verdict = "apart", "A holds more"
	}
	if xa.Median.Bound != capacity.Exact || ya.Median.Bound != capacity.Exact {
		verdict += " (a bound: the search's range did not contain the capacity)"
	}
	return []string{x.Cell, x.capacityText(), y.capacityText(), delta, ranges, verdict}
}
