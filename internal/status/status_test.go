package status

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/result"
)

// TestProgressLine checks the plain line printed per finished sample off
// a terminal.
func TestProgressLine(t *testing.T) {
	ok := &result.Sample{Case: "4 conns", Variant: "go-hello", Repeat: 2, Verdict: result.Verdict{Healthy: true},
		Load: &result.Load{RequestsPerSec: 8143.4, Latency: result.Latency{Count: 10, Percentiles: []result.Percentile{{Q: 99, US: 1234}}}}}
	bad := &result.Sample{Key: "x/c=4#1", Repeat: 1, Error: "target exited"}
	sick := &result.Sample{Case: "c", Variant: "v", Repeat: 1, Verdict: result.Verdict{Reasons: []string{"4 errors > 0"}}, Load: &result.Load{RequestsPerSec: 10}}
	for _, tc := range []struct {
		s    *result.Sample
		i, n int
		want string
	}{
		{ok, 3, 8, "[3/8] 4 conns · go-hello · repeat 2 · 8143 req/s · p99 1.23 ms · HEALTHY · ETA 1m20s"},
		{bad, 8, 8, "[8/8] x/c=4#1 · repeat 1 · FAILED: target exited · done"},
		{sick, 1, 2, "[1/2] c · v · repeat 1 · 10 req/s · UNHEALTHY: 4 errors > 0 · ETA 1m20s"},
	} {
		if got := ProgressLine(tc.i, tc.n, tc.s, 80*time.Second+300*time.Millisecond); got != tc.want {
			t.Errorf("ProgressLine:\n got  %s\n want %s", got, tc.want)
		}
	}
	var buf bytes.Buffer
	st := New(&buf, "")
	st.SampleDone(1, 2, ok, time.Minute)
	st.Stop()
	if !strings.HasPrefix(buf.String(), "[1/2] 4 conns · go-hello") || strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("off a terminal, SampleDone printed %q: want one plain line", buf.String())
	}
}
