package report

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"
)

// Comparison is one figure of one cell in two results files: both
// medians, the change, and the Mann–Whitney U test of the repeats.
type Comparison struct {
	Cell    string  `json:"cell"`
	Case    string  `json:"case"`
	Variant string  `json:"variant"`
	Figure  string  `json:"figure"`
	Unit    string  `json:"unit"`
	MedianA float64 `json:"median_a"`
	MedianB float64 `json:"median_b"`
	// DeltaPct is (B ÷ A − 1) × 100 of the medians (0 when A is 0).
	DeltaPct float64 `json:"delta_pct"`
	P        float64 `json:"p"`
	NA       int     `json:"n_a"`
	NB       int     `json:"n_b"`
	// Tested is false when the repeats are too few for any difference
	// to reach the significance level; Significant is p ≤ alpha.
	Tested      bool `json:"tested"`
	Significant bool `json:"significant"`
	// Better is +1 when B is better, -1 when worse, 0 when the figure
	// has no better direction or the change is not significant.
	Better int `json:"better"`
	// test is the U test itself, for the report's "p (n)" column.
	test benchmath.Comparison
}

// compareFigure compares m over one pair; false when a side lacks it.
func compareFigure(m metric, p pair, alpha float64) (Comparison, bool) {
	va, vb := m.values(p.as), m.values(p.bs)
	if len(va) == 0 || len(vb) == 0 {
		return Comparison{}, false
	}
	th := benchmath.Thresholds{CompareAlpha: alpha}
	cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(va, &th), benchmath.NewSample(vb, &th))
	c := Comparison{Cell: p.label, Case: p.c, Variant: p.v, Figure: m.name, Unit: m.unit, MedianA: median(va), MedianB: median(vb),
		P: cmp.P, NA: len(va), NB: len(vb), test: cmp}
	if c.MedianA != 0 {
		c.DeltaPct = (c.MedianB/c.MedianA - 1) * 100
	}
	c.Tested = minP(len(va), len(vb)) <= alpha
	c.Significant = c.Tested && cmp.P <= alpha
	if c.Significant && m.better != 0 && c.DeltaPct != 0 {
		c.Better = -1
		if (c.DeltaPct > 0) == (m.better > 0) {
			c.Better = 1
		}
	}
	return c, true
}

// CompareSummarySchema names the format of `compare --json`.
const CompareSummarySchema = "benchrig.compare/v1"

// CompareSummary is the computed comparison of two results files, what
// `benchrig compare --json` writes.
type CompareSummary struct {
	Schema string  `json:"schema"`
	A      string  `json:"a"`
	B      string  `json:"b"`
	Alpha  float64 `json:"alpha"`
	// Notice is the verification notice of a side that does not verify
	// (result.Report.Notice), A's first; absent when both verify.
	Notice      []string     `json:"notice,omitempty"`
	Notes       []string     `json:"notes"`
	Comparisons []Comparison `json:"comparisons"`
}

// Compare compares every figure of every cell the two sources share.
func Compare(a, b *Source, o CompareOptions) (*CompareSummary, error) {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	d, err := CompareDoc(a, b, o)
	if err != nil {
		return nil, err
	}
	pairs, _, _, err := matchCells(a, b)
	if err != nil {
		return nil, err
	}
	cs := &CompareSummary{Schema: CompareSummarySchema, A: a.Path, B: b.Path, Alpha: o.Alpha, Notice: d.Notice, Notes: append([]string{}, d.Notes...), Comparisons: []Comparison{}}
	for _, m := range append(append([]metric{}, compareMetrics...), gateMetrics...) {
		for _, p := range pairs {
			if c, ok := compareFigure(m, p, o.Alpha); ok {
				cs.Comparisons = append(cs.Comparisons, c)
			}
		}
	}
	return cs, nil
}

// Gate is one --fail-if condition: a figure, a direction and a change
// in percent of the median ("req/s < -5%": fail when requests/s fell by
// more than 5 %, significantly).
type Gate struct {
	Text   string
	Figure string // a compareMetrics name
	Less   bool   // "<": fail when the change is below Pct; ">": above
	Pct    float64
}

// gateFigures are the figure names a gate accepts, by the metric name
// they stand for.
var gateFigures = map[string]string{
	"req/s": "Requests/s", "rps": "Requests/s", "requests/s": "Requests/s",
	"p50": "p50", "p99": "p99", "p99.9": "p99.9",
	"server-us": "Server µs/request", "server-cores": "Server cores", "peak-mib": "Server peak MiB", "client-us": "Client µs/request",
	"misses": "Misses", "miss%": "Misses",
}

// GateFigureNames lists the figure names a gate accepts.
const GateFigureNames = "req/s, p50, p99, p99.9, server-us, server-cores, peak-mib, client-us, misses"

// missGate is the figure of the absolute gate: "misses > N%" fails when
// B's median share of reads that missed is above N % — misses are wrong
// answers, not noise: no test of significance, no relative change.
const missGate = "Misses"

// ParseGate parses "FIGURE < -N%" or "FIGURE > +N%" (N from 0 to 1000).
func ParseGate(s string) (Gate, error) {
	g := Gate{Text: strings.TrimSpace(s)}
	i := strings.IndexAny(s, "<>")
	if i < 0 {
		return g, fmt.Errorf("--fail-if %q: want FIGURE < -N%% or FIGURE > +N%%, such as 'req/s < -5%%' or 'p99 > +10%%'", s)
	}
	fig := strings.ToLower(strings.TrimSpace(s[:i]))
	name, ok := gateFigures[fig]
	if !ok {
		return g, fmt.Errorf("--fail-if %q: figure %q: want one of %s", s, fig, GateFigureNames)
	}
	g.Figure, g.Less = name, s[i] == '<'
	num := strings.TrimSpace(s[i+1:])
	if !strings.HasSuffix(num, "%") {
		return g, fmt.Errorf("--fail-if %q: the change %q must be a percentage, such as -5%%", s, num)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(num, "%")), 64)
	if err != nil || !finite(v) || v < -100 || v > 1000 {
		return g, fmt.Errorf("--fail-if %q: the change %q: want a percentage from -100%% to +1000%%", s, num)
	}
	if g.Figure == missGate && (g.Less || v < 0 || v > 100) {
		return g, fmt.Errorf("--fail-if %q: misses gate on the share of reads that missed in B: want 'misses > N%%', N from 0 to 100 (such as 'misses > 0%%')", s)
	}
	g.Pct = v
	return g, nil
}

// GateResult is what the gates found: the comparisons that failed one,
// and warnings of gates that could not be decided (too few repeats).
type GateResult struct {
	Failures []string
	Warnings []string
}

// ErrNoGateFigure says that no compared cell has a gate's figure.
var ErrNoGateFigure = errors.New("no compared cell has the figure")

// Check applies the gates to the comparisons: a gate fails on a cell only
// when the change is significant and past the gate's threshold.
func (cs *CompareSummary) Check(gates []Gate) GateResult {
	var r GateResult
	for _, g := range gates {
		seen := false
		for _, c := range cs.Comparisons {
			if c.Figure != g.Figure {
				continue
			}
			seen = true
			cell := c.Cell
			if c.Variant != "" && !strings.Contains(cell, c.Variant) {
				cell += " · " + c.Variant
			}
			if g.Figure == missGate {
				if c.MedianB > g.Pct {
					r.Failures = append(r.Failures, fmt.Sprintf("--fail-if %q: %s: B's median %s %% of the reads missed (A %s %%, n = %d + %d)",
						g.Text, cell, figure(c.MedianB), figure(c.MedianA), c.NA, c.NB))
				}
				continue
			}
			if !c.Tested {
				r.Warnings = append(r.Warnings, fmt.Sprintf("--fail-if %q: %s has %d and %d repeats: no change can be significant at α = %g with fewer than %d per side, so the gate cannot fail it (%s %s → %s, %+.1f %%, untested). Run 5 repeats or more.",
					g.Text, cell, c.NA, c.NB, cs.Alpha, uTestMinRepeats(cs.Alpha), c.Figure, figure(c.MedianA), figure(c.MedianB), c.DeltaPct))
				continue
			}
			past := c.DeltaPct > g.Pct
			if g.Less {
				past = c.DeltaPct < g.Pct
			}
			if c.Significant && past && !math.IsNaN(c.DeltaPct) {
				r.Failures = append(r.Failures, fmt.Sprintf("--fail-if %q: %s: %s median %s → %s %s (%+.1f %%), p = %.3g (n = %d + %d)",
					g.Text, cell, c.Figure, figure(c.MedianA), figure(c.MedianB), c.Unit, c.DeltaPct, c.P, c.NA, c.NB))
			}
		}
		if !seen {
			r.Warnings = append(r.Warnings, fmt.Sprintf("--fail-if %q: %v", g.Text, ErrNoGateFigure))
		}
	}
	return r
}
