package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/result"
)

// TestAssertionsInEveryFormat: the console sums each assertion over the
// samples (held in how many of those that evaluated it), and the text,
// Markdown and HTML reports list it per case with its values (of the first
// sample where it failed).
func TestAssertionsInEveryFormat(t *testing.T) {
	ok := func(v string) result.Assertion {
		return result.Assertion{Expr: "cache_hits == requests * keys", Holds: true, Values: v}
	}
	a, b, c := synth(100, 1), synth(100, 1), synth(100, 1)
	a.Assertions = []result.Assertion{ok("cache_hits = 64, requests * keys = 64"), {Expr: "errors == 0", Holds: true, Values: "errors = 0"}}
	b.Assertions = []result.Assertion{{Expr: "cache_hits == requests * keys", Values: "cache_hits = 70, requests * keys = 64"}}
	c.Assertions = []result.Assertion{ok("cache_hits = 128, requests * keys = 128")}
	src := &Source{Path: "a.json", Kind: "suite", Title: "asserts", Rows: []Row{{"64 keys", "resp", a}, {"64 keys", "resp", b}, {"1 key", "resp", c}}}
	var out bytes.Buffer
	if err := Console(&out, src); err != nil {
		t.Fatal(err)
	}
	if want := "Assertions held: cache_hits == requests * keys in 2 of 3 samples; errors == 0 in 1 of 1 samples"; !strings.Contains(out.String(), want) {
		t.Errorf("console lacks %q:\n%s", want, out.String())
	}
	for name, text := range renderDoc(t, ReportDoc(src)) {
		s := strings.NewReplacer("\\_", "_", "\\*", "*").Replace(text) // Markdown's escapes
		for _, want := range []string{"Assertions per case", "cache_hits = 70, requests * keys = 64", "1/2", "cache_hits = 128, requests * keys = 128"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s report lacks %q", name, want)
			}
		}
	}
	if line := assertionsLine([]Row{{"1 key", "go", synth(1, 1)}}); line != "" {
		t.Errorf("no assertions, yet %q", line)
	}
}
