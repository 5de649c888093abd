package gate

import (
	"errors"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/exitcode"
)

// TestParse: good gates parse, one that does not is a usage error.
func TestParse(t *testing.T) {
	gates, err := Parse([]string{"req/s < -5%", "p99 > +10%"})
	if err != nil || len(gates) != 2 {
		t.Fatalf("Parse: %d gates, %v; want 2", len(gates), err)
	}
	var u exitcode.UsageError
	if _, err := Parse([]string{"req/s < -5%", "nonsense"}); !errors.As(err, &u) {
		t.Errorf("a bad gate: %v, want a usage error", err)
	}
}

// TestRegressionExitsUnhealthy: a failed gate exits 3 with its failures
// listed.
func TestRegressionExitsUnhealthy(t *testing.T) {
	err := error(RegressionError{Failures: []string{"a: req/s -9%", "b: p99 +12%"}})
	var b strings.Builder
	if code := exitcode.Of(err, &b); code != exitcode.Unhealthy {
		t.Errorf("exit %d, want %d", code, exitcode.Unhealthy)
	}
	if want := "2 significant change(s) past a --fail-if threshold:\n  a: req/s -9%\n  b: p99 +12%"; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
}
