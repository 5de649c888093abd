package main

import (
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/result"
)

// loadReasons are the verdict reasons a busy machine can give a healthy
// server: latency, coverage and schedule lag thresholds, sends dropped
// while the client was starved, the client's own saturation.
var loadReasons = []string{"p99", "coverage", "schedule lag", "sends dropped", "client saturated"}

// healthyButForLoad fails the test when the verdict names a reason a
// loaded machine cannot cause (errors, timeouts, unexpected responses, a
// target that exited, a failed check): tests assert what the server did,
// never how fast the machine was.
func healthyButForLoad(t *testing.T, what string, v result.Verdict) {
	t.Helper()
	for _, why := range v.Reasons {
		ok := false
		for _, r := range loadReasons {
			ok = ok || strings.Contains(why, r)
		}
		if !ok {
			t.Errorf("%s: UNHEALTHY for a reason load does not explain: %q (verdict %+v)", what, why, v)
		}
	}
}
