package report

import (
	"fmt"
	"strings"
)

// assertionsTable is the suite's assertions as the samples recorded them:
// one row per case, variant and assertion (in the order the samples
// recorded them), each side's values in the first sample where it
// failed (else in the last one), and in how many of the samples it held.
func (g *grid) assertionsTable() (Table, bool) {
	t := Table{Caption: "Assertions per case: values (of the first sample where one failed, else of the last) and samples where each held",
		Header: []string{"Case", "Variant", "Assertion", "Values", "Held"}, Labels: 4}
	type tally struct {
		held, n int
		values  string
		failed  bool
	}
	for _, c := range g.cases {
		for _, v := range g.variants {
			var order []string
			m := map[string]*tally{}
			for _, s := range g.at(c, v) {
				for _, a := range s.Assertions {
					x := m[a.Expr]
					if x == nil {
						x = &tally{}
						m[a.Expr] = x
						order = append(order, a.Expr)
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
			for _, e := range order {
				x := m[e]
				t.Rows = append(t.Rows, []string{c, v, e, x.values, fmt.Sprintf("%d/%d", x.held, x.n)})
			}
		}
	}
	return t, len(t.Rows) > 0
}

// assertionsLine is the terminal's line on the samples' assertions: each
// expression (in the order the samples recorded them) and in how many of
// the samples that evaluated it it held. Empty when no sample has any; a
// failed one is also among the UNHEALTHY samples' notes.
func assertionsLine(rows []Row) string {
	var order []string
	held, n := map[string]int{}, map[string]int{}
	for _, r := range rows {
		if r.Sample == nil {
			continue
		}
		for _, a := range r.Sample.Assertions {
			if n[a.Expr] == 0 {
				order = append(order, a.Expr)
			}
			n[a.Expr]++
			if a.Holds {
				held[a.Expr]++
			}
		}
	}
	if len(order) == 0 {
		return ""
	}
	parts := make([]string, len(order))
	for i, e := range order {
		parts[i] = fmt.Sprintf("%s in %d of %d samples", e, held[e], n[e])
	}
	return "Assertions held: " + strings.Join(parts, "; ")
}
