package system

import (
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
)

// TestAssertionsWithUnansweredRequests: a request sent and never answered
// may have been counted by the server or not, so an assertion reading
// requests holds when some k of the u unanswered make it hold (the least
// such k is named), and fails as before beyond them; with none unanswered
// it is exact, and an assertion that does not read requests is not
// retried.
func TestAssertionsWithUnansweredRequests(t *testing.T) {
	s := &suite.Suite{Paths: map[string]*suite.Path{"p": {Assert: []string{"cache_hits == requests * keys", "cache_misses == 0"}}}}
	c := suite.Cell{Path: "p", Batch: 64, Connections: 64}
	judge := JudgeAssertions(s, c)
	cases := []struct {
		name                string
		hits, misses        float64
		warmup, outstanding int64
		answered, timeouts  int64
		holds               [2]bool
		values              string
	}{
		{"exact", 500 * 64, 0, 0, 0, 0, 0, [2]bool{true, true}, "cache_hits = 32000, requests * keys = 32000"},
		{"none unanswered: exact", 503 * 64, 0, 0, 4, 4, 0, [2]bool{false, true}, "cache_hits = 32192, requests * keys = 32000"},
		{"three of the warm-up's", 503 * 64, 0, 21, 0, 0, 0, [2]bool{true, true},
			"cache_hits = 32192, requests * keys = 32192 (requests counts 3 of the 21 sent and never answered)"},
		{"timeouts and the end's count", 502 * 64, 0, 0, 3, 2, 1, [2]bool{true, true},
			"cache_hits = 32128, requests * keys = 32128 (requests counts 2 of the 2 sent and never answered)"},
		{"more than were unanswered", 530 * 64, 0, 21, 0, 0, 0, [2]bool{false, true}, "cache_hits = 33920, requests * keys = 32000"},
		{"not a whole request", 500*64 + 5, 0, 21, 0, 0, 0, [2]bool{false, true}, "cache_hits = 32005, requests * keys = 32000"},
		{"misses are not retried", 500 * 64, 3, 21, 0, 0, 0, [2]bool{true, false}, "cache_hits = 32000, requests * keys = 32000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			smp := &result.Sample{
				Warmup: &result.WarmupSummary{Unanswered: tc.warmup},
				Load:   &result.Load{Requests: 500 - tc.answered, OutstandingAtEnd: tc.outstanding, OutstandingAnswered: tc.answered, Timeouts: tc.timeouts},
				Stats:  map[string]float64{"cache_hits": tc.hits, "cache_misses": tc.misses},
			}
			smp.Verdict = result.Verdict{Healthy: true}
			judge(smp)
			if len(smp.Assertions) != 2 {
				t.Fatalf("assertions %+v", smp.Assertions)
			}
			for i, a := range smp.Assertions {
				if a.Holds != tc.holds[i] {
					t.Errorf("%q holds = %v, want %v (%s)", a.Expr, a.Holds, tc.holds[i], a.Values)
				}
			}
			if got := smp.Assertions[0].Values; got != tc.values {
				t.Errorf("values %q, want %q", got, tc.values)
			}
			if healthy := tc.holds[0] && tc.holds[1]; smp.Verdict.Healthy != healthy {
				t.Errorf("verdict %+v, want healthy = %v", smp.Verdict, healthy)
			}
			if !tc.holds[0] && !strings.Contains(strings.Join(smp.Verdict.Reasons, "\n"), `assertion "cache_hits == requests * keys" failed`) {
				t.Errorf("verdict %+v names no failed assertion", smp.Verdict)
			}
			if vars := AssertionVars(smp, c); vars["unanswered"] != float64(smp.Unanswered()) || smp.Unanswered() != tc.warmup+tc.outstanding-tc.answered+tc.timeouts {
				t.Errorf("unanswered %v (var %v)", smp.Unanswered(), vars["unanswered"])
			}
		})
	}
}
