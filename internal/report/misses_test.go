package report

import (
	"strings"
	"testing"
)

// TestMissesGate: compare --fail-if 'misses > 0%' fails on B's misses
// (absolute, no test of significance needed, whatever the repeats), not on
// A's, and the comparison shows the misses only when some sample has them
// (issue 26, item 6).
func TestMissesGate(t *testing.T) {
	cells := map[[2]string][][2]float64{{"4 conns", "get"}: {{1000, 1}, {1010, 1}}}
	a, b := source("a", cells), source("b", cells)
	for _, r := range b.Rows {
		r.Sample.Load.Misses = r.Sample.Load.Requests / 4 // a fifth of the reads missed
	}
	g, err := ParseGate("misses > 0%")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := Compare(a, b, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := cs.Check([]Gate{g}); len(r.Failures) != 1 || !strings.Contains(r.Failures[0], "20.0 % of the reads missed") {
		t.Errorf("A without misses → B with 20 %%: %+v", r)
	}
	back, err := Compare(b, a, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := back.Check([]Gate{g}); len(r.Failures) != 0 || len(r.Warnings) != 0 {
		t.Errorf("B without misses: %+v", r)
	}
	d, err := CompareDoc(a, b, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasTable(d, "Misses") {
		t.Error("the comparison does not show the misses")
	}
	d, err = CompareDoc(a, a, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hasTable(d, "Misses") {
		t.Error("a comparison without misses shows a table of them")
	}
}

func hasTable(d *Doc, prefix string) bool {
	for _, s := range d.Sections {
		for _, tb := range s.Tables {
			if strings.HasPrefix(tb.Caption, prefix) {
				return true
			}
		}
	}
	return false
}
