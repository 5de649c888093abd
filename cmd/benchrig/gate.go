package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/report"
)

// regressionError is a --fail-if gate that failed: exit code 3, like an
// unhealthy run, with its own message.
type regressionError struct{ failures []string }

func (e regressionError) Error() string {
	return fmt.Sprintf("%d significant change(s) past a --fail-if threshold:\n  %s", len(e.failures), strings.Join(e.failures, "\n  "))
}

// Is makes a regression count as exitcode.ErrUnhealthy, which exits 3.
func (e regressionError) Is(target error) bool { return target == exitcode.ErrUnhealthy }

// applyGates checks the comparison against the gates: warnings (gates that
// too few repeats cannot decide) go to stderr; failures are the error.
func applyGates(cs *report.CompareSummary, gates []report.Gate, stderr io.Writer) error {
	if len(gates) == 0 {
		return nil
	}
	r := cs.Check(gates)
	for _, w := range r.Warnings {
		fmt.Fprintln(stderr, "benchrig: warning:", w)
	}
	if len(r.Failures) > 0 {
		return regressionError{r.Failures}
	}
	return nil
}
