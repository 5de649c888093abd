// Package gate checks a comparison against compare's --fail-if gates: a
// significant change past a threshold fails the command with exit code 3,
// like an unhealthy run.
package gate

import (
	"fmt"
	"io"
	"strings"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/report"
)

// Parse reads the --fail-if gates; a gate that does not parse is a usage
// error.
func Parse(failIf []string) ([]report.Gate, error) {
	var gates []report.Gate
	for _, f := range failIf {
		g, err := report.ParseGate(f)
		if err != nil {
			return nil, exitcode.Usage(err)
		}
		gates = append(gates, g)
	}
	return gates, nil
}

// RegressionError is a --fail-if gate that failed: exit code 3, like an
// unhealthy run, with its own message.
type RegressionError struct{ Failures []string }

func (e RegressionError) Error() string {
	return fmt.Sprintf("%d significant change(s) past a --fail-if threshold:\n  %s", len(e.Failures), strings.Join(e.Failures, "\n  "))
}

// Is makes a regression count as exitcode.ErrUnhealthy, which exits 3.
func (e RegressionError) Is(target error) bool { return target == exitcode.ErrUnhealthy }

// Apply checks the comparison against the gates: warnings (gates that
// too few repeats cannot decide) go to stderr; failures are the error.
func Apply(cs *report.CompareSummary, gates []report.Gate, stderr io.Writer) error {
	if len(gates) == 0 {
		return nil
	}
	r := cs.Check(gates)
	for _, w := range r.Warnings {
		fmt.Fprintln(stderr, "benchrig: warning:", w)
	}
	if len(r.Failures) > 0 {
		return RegressionError{r.Failures}
	}
	return nil
}
