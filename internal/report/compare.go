package report

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/benchrig/benchrig/internal/result"
)

// CompareOptions configure CompareDoc.
type CompareOptions struct {
	// Alpha is the significance level of the Mann–Whitney U test
	// (0: 0.05).
	Alpha float64
}

// compareMetrics are the figures an A/B comparison tests.
var compareMetrics = []metric{mReqPerSec, mP50, mP99, mP999, mServerUS, mServerCores, mPeakMiB, mClientUS}

// gateMetrics are figures a --fail-if gate reads beyond compareMetrics;
// the comparison shows them only when some sample has them.
var gateMetrics = []metric{mMisses}

// anyMisses reports whether a sample of the pairs had a miss.
func anyMisses(pairs []pair) bool {
	for _, p := range pairs {
		for _, s := range append(append([]*result.Sample{}, p.as...), p.bs...) {
			if s.Load != nil && s.Load.Misses > 0 {
				return true
			}
		}
	}
	return false
}

// pair is one cell present in both files.
type pair struct {
	label  string // "case · variant"
	c, v   string
	cb     string // B's case when it is named otherwise (see sameCase); else c
	as, bs []*result.Sample
}

// compareNotice is the verification notice of both sides, A's first; one
// file compared with itself (--a and --b) says it once.
func compareNotice(a, b *Source) []string {
	out := append([]string(nil), a.Notice...)
	if b.Path != a.Path || len(a.Notice) == 0 {
		out = append(out, b.Notice...)
	}
	return out
}

// CompareDoc compares two results files cell by cell (the same case and
// variant in both; when each file has a single variant, by case alone, so
// that two runs of one suite against different builds compare). For each
// figure it shows A and B as median [min–max], the change of the medians,
// and whether the difference is significant: a Mann–Whitney U test of the
// repeats (golang.org/x/perf/benchmath, as benchstat does), "~" when it is
// not. With n repeats per side the smallest possible p is 2/C(2n, n): 3
// repeats can never reach 0.05, 4 can.
func CompareDoc(a, b *Source, o CompareOptions) (*Doc, error) {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.Alpha <= 0 || o.Alpha >= 1 {
		return nil, fmt.Errorf("alpha %v: want a significance level between 0 and 1, such as 0.05", o.Alpha)
	}
	if a.Search != nil || b.Search != nil {
		return capacityCompareDoc(a, b)
	}
	pairs, onlyA, onlyB, err := matchCells(a, b)
	if err != nil {
		return nil, err
	}
	d := &Doc{Title: fmt.Sprintf("benchrig compare · A: %s · B: %s", a.Title, b.Title), Notice: compareNotice(a, b)}
	for _, side := range []struct {
		name string
		src  *Source
	}{{"A", a}, {"B", b}} {
		d.Meta = append(d.Meta, sideMeta(side.name, side.src)...)
		for _, n := range side.src.Notes {
			d.Notes = append(d.Notes, side.name+": "+n)
		}
		for _, n := range sampleNotes(side.src.Rows) {
			d.Notes = append(d.Notes, side.name+": "+n)
		}
		for _, n := range noiseNotes(newGrid(side.src.Rows)) {
			d.Notes = append(d.Notes, side.name+": "+n)
		}
	}
	d.Meta = append(d.Meta, KV{"Test", fmt.Sprintf("Mann–Whitney U over the repeats, α = %g; \"~\" = no significant difference", o.Alpha)})
	if len(onlyA) > 0 {
		d.Notes = append(d.Notes, "Only in A (not compared): "+listSome(onlyA))
	}
	if len(onlyB) > 0 {
		d.Notes = append(d.Notes, "Only in B (not compared): "+listSome(onlyB))
	}
	minN := math.MaxInt
	for _, p := range pairs {
		minN = min(minN, len(p.as), len(p.bs))
	}
	if need := uTestMinRepeats(o.Alpha); minN < need {
		d.Notes = append(d.Notes, fmt.Sprintf("Some cells have %d repeat(s) on a side: no difference can be significant at α = %g with fewer than %d per side, so their changes are shown \"untested\". Run more repeats (REPEATS=%d or more).",
			minN, o.Alpha, need, need+1))
	}

	chart := Chart{Kind: Bars, Title: "Requests/s, A and B", Unit: "req/s"}
	sa, sb := Series{Name: "A: " + a.Title}, Series{Name: "B: " + b.Title}
	for _, p := range pairs {
		chart.Categories = append(chart.Categories, p.label)
		sa.Points = append(sa.Points, mReqPerSec.point(p.as))
		sb.Points = append(sb.Points, mReqPerSec.point(p.bs))
	}
	chart.Series = []Series{sa, sb}
	sec := Section{Title: "A/B", Text: []string{
		"Each figure: A and B as median [min–max] across repeats; Δ = change of the medians from A to B when the difference is significant, " +
			"with better/worse where a direction is better; p and the repeats per side (n) of the test.",
	}, Charts: []Chart{chart}}
	for _, m := range compareMetrics {
		if t, ok := compareTable(m, pairs, o.Alpha); ok {
			sec.Tables = append(sec.Tables, t)
		}
	}
	if anyMisses(pairs) {
		if t, ok := compareTable(mMisses, pairs, o.Alpha); ok {
			sec.Tables = append(sec.Tables, t)
		}
	}
	d.Sections = append(d.Sections, sec)
	return d, nil
}

// matchCells pairs the cells of a and b.
func matchCells(a, b *Source) (pairs []pair, onlyA, onlyB []string, err error) {
	ga, gb := newGrid(a.Rows), newGrid(b.Rows)
	if len(ga.cell) == 0 || len(gb.cell) == 0 {
		return nil, nil, nil, errors.New("nothing to compare: a file has no samples")
	}
	for _, c := range ga.cases {
		for _, v := range ga.variants {
			if as, bs := ga.at(c, v), gb.at(c, v); len(as) > 0 && len(bs) > 0 {
				pairs = append(pairs, pair{label: c + " · " + v, c: c, v: v, as: as, bs: bs})
			}
		}
	}
	byCase := false
	if len(pairs) == 0 && len(ga.variants) == 1 && len(gb.variants) == 1 {
		byCase = true // one variant each: A's against B's
		va, vb := ga.variants[0], gb.variants[0]
		for _, c := range ga.cases {
			if as, bs := ga.at(c, va), gb.at(c, vb); len(as) > 0 && len(bs) > 0 {
				pairs = append(pairs, pair{label: c, c: c, cb: c, v: va + " → " + vb, as: as, bs: bs})
			}
		}
		if len(pairs) == 0 { // a keyed protocol's 1 key against an unkeyed one's request
			for _, c := range ga.cases {
				cb, ok := sameCase(c, gb.cases)
				if as, bs := ga.at(c, va), gb.at(cb, vb); ok && len(as) > 0 && len(bs) > 0 {
					pairs = append(pairs, pair{label: withoutOneKey(c), c: c, cb: cb, v: va + " → " + vb, as: as, bs: bs})
				}
			}
		}
	}
	if len(pairs) == 0 {
		return nil, nil, nil, fmt.Errorf("no cell of %s matches one of %s: A has %s; B has %s (cells match by case and variant, or by case when each file has one variant)",
			a.Path, b.Path, listSome(cellNames(ga)), listSome(cellNames(gb)))
	}
	matched := map[string]bool{}
	for _, p := range pairs {
		matched["A"+p.c+"\x00"+p.v] = true
		matched["B"+p.c+"\x00"+p.v] = true
	}
	side := func(tag string, g *grid) []string {
		var out []string
		for _, c := range g.cases {
			for _, v := range g.variants {
				if len(g.at(c, v)) == 0 {
					continue
				}
				key := c + "\x00" + v
				if byCase {
					if slicesContain(pairs, tag, c) {
						continue
					}
				} else if matched[tag+key] {
					continue
				}
				out = append(out, c+" · "+v)
			}
		}
		return out
	}
	return pairs, side("A", ga), side("B", gb), nil
}

// slicesContain reports whether a pair holds side tag's case c.
func slicesContain(pairs []pair, tag, c string) bool {
	for _, p := range pairs {
		if (tag == "A" && p.c == c) || (tag == "B" && p.cb == c) {
			return true
		}
	}
	return false
}

// oneKey is how a keyed protocol's case label (suite.Cell.CaseLabel) starts
// when each request carries one key.
const oneKey = "1 key · "

// withoutOneKey is case c without a leading "1 key · ".
func withoutOneKey(c string) string { return strings.TrimPrefix(c, oneKey) }

// sameCase returns the one case of cases that is c once a key count of one
// is left out of both: a keyed protocol's request of one key (a gRPC call:
// "1 key · 4 conns") is the same case as an unkeyed one's request ("4
// conns", JSON over HTTP), so that the same operation over two protocols
// compares. Exact labels are matched before this is tried.
func sameCase(c string, cases []string) (string, bool) {
	found, n := "", 0
	for _, b := range cases {
		if b != c && withoutOneKey(b) == withoutOneKey(c) {
			found, n = b, n+1
		}
	}
	return found, n == 1
}

func cellNames(g *grid) []string {
	var out []string
	for _, c := range g.cases {
		for _, v := range g.variants {
			if len(g.at(c, v)) > 0 {
				out = append(out, c+" · "+v)
			}
		}
	}
	return out
}

// listSome joins up to 8 names, saying how many more there are.
func listSome(names []string) string {
	const most = 8
	if len(names) <= most {
		return strings.Join(names, "; ")
	}
	return strings.Join(names[:most], "; ") + fmt.Sprintf("; and %d more", len(names)-most)
}

// compareTable is one figure's comparison over the pairs, with the
// geometric mean of the B/A ratios when there are several; false when no
// pair has the figure on both sides.
func compareTable(m metric, pairs []pair, alpha float64) (Table, bool) {
	title := m.name
	if m.unit != "" {
		title += " (" + m.unit + ")"
	}
	t := Table{Caption: title, Header: []string{"Cell", "A", "B", "Δ", "p (n)"}}
	var logSum float64
	var logs int
	for _, p := range pairs {
		c, ok := compareFigure(m, p, alpha)
		if !ok {
			continue
		}
		ma, mb := c.MedianA, c.MedianB
		t.Rows = append(t.Rows, []string{p.label, m.cell(p.as), m.cell(p.bs), delta(m, c), c.test.String()})
		if ma > 0 && mb > 0 {
			logSum += math.Log(mb / ma)
			logs++
		}
	}
	if len(t.Rows) == 0 {
		return t, false
	}
	if logs > 1 {
		t.Rows = append(t.Rows, []string{"geomean of B/A", "", "", fmt.Sprintf("%+.2f %%", (math.Exp(logSum/float64(logs))-1)*100), fmt.Sprintf("%d cells", logs)})
	}
	return t, true
}

// delta renders the change of the medians: "~" when the test finds no
// significant difference, else the percentage and, for a figure with a
// better direction, which way it went. When the repeats are too few for
// any difference to be significant, it shows the change marked
// "untested" rather than hide it behind a "~".
func delta(m metric, c Comparison) string {
	untested := !c.Tested
	if c.Tested && !c.Significant {
		return "~"
	}
	if c.MedianA == 0 {
		return "?"
	}
	pct := (c.MedianB/c.MedianA - 1) * 100
	s := fmt.Sprintf("%+.2f %%", pct)
	switch {
	case untested:
		s += " (untested)"
	case pct == 0 || m.better == 0:
	case (pct > 0) == (m.better > 0):
		s += " better"
	default:
		s += " worse"
	}
	return s
}

// minP is the smallest p-value a two-sided Mann–Whitney U test of n1
// against n2 values can give: 2 ÷ C(n1+n2, n1).
func minP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	return min(1, 2/binomial(n1+n2, n1))
}

// uTestMinRepeats is the fewest repeats per side with which a Mann–Whitney
// U test can reach p ≤ alpha (the smallest p of n against n is
// 2 ÷ C(2n, n)).
func uTestMinRepeats(alpha float64) int {
	for n := 1; n < 64; n++ {
		if minP(n, n) <= alpha {
			return n
		}
	}
	return 64
}

func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// sideMeta are a compared file's key facts, each named for its side ("A
// file", "B suite").
func sideMeta(side string, src *Source) []KV {
	var out []KV
	for _, kv := range sourceMeta(src) {
		out = append(out, KV{side + " " + strings.ToLower(kv.Key[:1]) + kv.Key[1:], kv.Value})
	}
	return out
}
