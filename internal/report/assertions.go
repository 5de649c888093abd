package report

import (
	"fmt"
	"strings"

	"github.com/benchrig/benchrig/internal/result"
)

// assertionTally is one assertion summed over samples: in how many of
// those that evaluated it it held, and its sides' values in the first
// where it failed, else in the last.
type assertionTally struct {
	expr    string
	held, n int
	values  string
	failed  bool
}

// tallyAssertions sums the samples' assertions by expression, in the
// order the samples recorded them.
func tallyAssertions(samples []*result.Sample) []*assertionTally {
	var out []*assertionTally
	by := map[string]*assertionTally{}
	for _, s := range samples {
		if s == nil {
			continue
		}
		for _, a := range s.Assertions {
			x := by[a.Expr]
			if x == nil {
				x = &assertionTally{expr: a.Expr}
				by[a.Expr] = x
				out = append(out, x)
			}
			x.n++
			if a.Holds {
				x.held++
			}
			if !x.failed {
				x.values, x.failed = a.Values, !a.Holds
			}
		}
	}
	return out
}

// assertionsTable is the suite's assertions as the samples recorded them:
// one row per case, variant and assertion (tallyAssertions), each side's
// values in the first sample where it failed (else in the last one), and
// in how many of the samples it held.
func (g *grid) assertionsTable() (Table, bool) {
	t := Table{Caption: "Assertions per case: values (of the first sample where one failed, else of the last) and samples where each held",
		Header: []string{"Case", "Variant", "Assertion", "Values", "Held"}, Labels: 4}
	for _, c := range g.cases {
		for _, v := range g.variants {
			for _, x := range tallyAssertions(g.at(c, v)) {
				t.Rows = append(t.Rows, []string{c, v, x.expr, x.values, fmt.Sprintf("%d/%d", x.held, x.n)})
			}
		}
	}
	return t, len(t.Rows) > 0
}

// assertionsLine is the terminal's line on the samples' assertions: each
// expression and in how many of the samples that evaluated it it held.
// Empty when no sample has any; a failed one is also among the UNHEALTHY
// samples' notes.
func assertionsLine(rows []Row) string {
	samples := make([]*result.Sample, len(rows))
	for i, r := range rows {
		samples[i] = r.Sample
	}
	var parts []string
	for _, x := range tallyAssertions(samples) {
		parts = append(parts, fmt.Sprintf("%s in %d of %d samples", x.expr, x.held, x.n))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Assertions held: " + strings.Join(parts, "; ")
}
