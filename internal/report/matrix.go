package report

import (
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/benchrig/benchrig/internal/result"
)

// Row places one sample in a comparison: the case it measured (a row of
// the table: "64 keys · 4 connections") and the variant compared (a column:
// the access path, the target).
type Row struct {
	Case    string
	Variant string
	Sample  *result.Sample
}

// Matrix writes the comparison tables of seeds 000 and 001: requests per
// second by case (rows) and variant (columns) as median [min–max] across
// repeats, then the resource table (client cores, server cores and % of the
// machine, server µs/request, sampled peak memory) of the same samples.
// Cases and variants keep the order of their first appearance.
func Matrix(w io.Writer, rows []Row) error {
	p := &printer{w: w}
	g := newGrid(rows)
	t := &table{}
	t.add(append([]string{"Case"}, g.variants...)...)
	for _, c := range g.cases {
		line := []string{c}
		for _, v := range g.variants {
			line = append(line, mReqPerSec.cell(g.at(c, v)))
		}
		t.add(line...)
	}
	p.f("Requests/s, median [min–max] across repeats:\n")
	p.table(t)

	t = &table{}
	t.add("Case", "Variant", "p99", "Client cores", "Server cores (% machine)", "Server µs/request", "Peak MiB", "Healthy")
	for _, c := range g.cases {
		for _, v := range g.variants {
			ss := g.at(c, v)
			if len(ss) == 0 {
				continue
			}
			t.add(c, v, medianRange(ss, mP99.get, "%.2f ms"), mClientCores.cell(ss),
				mServerCores.cell(ss)+machinePct(ss), mServerUS.cell(ss), mPeakMiB.cell(ss), healthy.cell(ss))
		}
	}
	p.f("\nLatency and resources, median [min–max] (peak memory is PSS where the server has several processes):\n")
	p.table(t)
	processesText(p, g)
	return p.err
}

func machinePct(ss []*result.Sample) string {
	var v []float64
	for _, s := range ss {
		if sv := s.HeadlineServer(); sv != nil && sv.Figures.WindowSeconds > 0 {
			v = append(v, sv.Figures.MachinePercent)
		}
	}
	if len(v) == 0 {
		return ""
	}
	sort.Float64s(v)
	return fmt.Sprintf(" (%.1f %%)", median(v))
}

func order(rows []Row) (cases, variants []string) {
	seenC, seenV := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		if !seenC[r.Case] {
			seenC[r.Case] = true
			cases = append(cases, r.Case)
		}
		if !seenV[r.Variant] {
			seenV[r.Variant] = true
			variants = append(variants, r.Variant)
		}
	}
	return cases, variants
}

// medianRange renders median [min–max] of f over the samples, or "–" when
// none has the figure; one value renders alone.
func medianRange(ss []*result.Sample, f func(*result.Sample) (float64, bool), format string) string {
	var v []float64
	for _, s := range ss {
		if x, ok := f(s); ok && !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return "–"
	}
	sort.Float64s(v)
	if len(v) == 1 {
		return fmt.Sprintf(format, v[0])
	}
	return fmt.Sprintf(format+" ["+format+"–"+format+"]", median(v), v[0], v[len(v)-1])
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
