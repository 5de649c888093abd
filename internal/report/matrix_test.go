package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/result"
)

func TestMatrixMedianRange(t *testing.T) {
	mk := func(rps, cores float64) *result.Sample {
		return &result.Sample{Load: &result.Load{RequestsPerSec: rps}, Verdict: result.Verdict{Healthy: true},
			Server: &result.Server{Figures: result.ServerFigures{WindowSeconds: 1, Cores: cores, MachinePercent: cores * 50, MicrosPerRequest: 10, RSSPeak: 64 << 20}}}
	}
	rows := []Row{
		{"64 keys · 4 conns", "SQL", mk(7000, 1)}, {"64 keys · 4 conns", "SQL", mk(7100, 1)}, {"64 keys · 4 conns", "SQL", mk(6900, 1)},
		{"64 keys · 4 conns", "mget", mk(7500, 1)},
		{"1 key · 64 conns", "SQL", mk(55000, 2)},
	}
	var b bytes.Buffer
	if err := Matrix(&b, rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"7000 [6900–7100]", "│ 7500 ", "55000", "–", "3/3", "64.0", "(50.0 %)"} {
		if !strings.Contains(out, want) {
			t.Errorf("matrix lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "64 keys · 4 conns") > strings.Index(out, "1 key · 64 conns") {
		t.Error("cases not in order of appearance")
	}
}
