package report

import (
	"math"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
)

// FuzzParseGate: every `compare --fail-if` goes through ParseGate. Any
// text is accepted or refused without a panic; a refusal quotes the flag
// and says what is accepted; an accepted gate names one of the compared
// figures, a finite change from -100 % to +1000 %, and keeps its text; and
// Check applies it to a comparison without a panic.
func FuzzParseGate(f *testing.F) {
	for _, s := range []string{"req/s < -5%", "p99 > +10%", "p99.9>0%", "server-us < -100%", "rps < NaN%", "p50 > 1e309%", "<5%", "req/s < -5", "client-us > +1000.0000001%", " peak-mib  >  +3 % "} {
		f.Add(s)
	}
	cs := &CompareSummary{Comparisons: []Comparison{{Figure: "Requests/s", Cell: "c", DeltaPct: -7, Tested: true, Significant: true}, {Figure: "p99", Cell: "c", DeltaPct: 12, Tested: true, Significant: true}}}
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, s string) {
		fuzzcheck.Bound(t, len(s), func() {
			g, err := ParseGate(s)
			if err != nil {
				if msg := err.Error(); !strings.HasPrefix(msg, "--fail-if ") || !strings.Contains(msg, "want") && !strings.Contains(msg, "such as") {
					t.Fatalf("%q: the refusal neither quotes the flag nor says what is accepted: %v", s, err)
				}
				return
			}
			if _, ok := gateFigures[strings.ToLower(strings.TrimSpace(s[:strings.IndexAny(s, "<>")]))]; !ok {
				t.Fatalf("%q: accepted a figure that is not a gate's", s)
			}
			if math.IsNaN(g.Pct) || math.IsInf(g.Pct, 0) || g.Pct < -100 || g.Pct > 1000 || g.Text != strings.TrimSpace(s) {
				t.Fatalf("%q: gate %+v", s, g)
			}
			_ = cs.Check([]Gate{g})
		})
	})
}
