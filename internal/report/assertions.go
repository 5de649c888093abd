package report

import "fmt"

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
