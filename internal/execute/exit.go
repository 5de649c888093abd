package execute

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/benchrig/benchrig/internal/exitcode"
)

// samplesExit maps a run's samples to the error that sets the exit code,
// the same for `run` and every quick mode (README, "Exit codes"): 1 when
// every sample failed or the run was interrupted (Ctrl-C: the plan did not
// run to its end); 3 with --fail-unhealthy when some sample was UNHEALTHY
// or failed; else nil (0), failed samples and samples cut short then named
// on stderr. A sample whose window was cut short by its target's death is
// in the file like any other: it is UNHEALTHY, the run is not interrupted.
func samplesExit(res *executed, failUnhealthy bool, stderr io.Writer) error {
	failed, unhealthy, cut, first, firstCut := 0, 0, 0, "", ""
	for _, s := range res.samples {
		if s.Error != "" {
			if failed++; first == "" {
				first = s.Error
			}
		}
		if !s.Verdict.Healthy {
			unhealthy++
		}
		if s.Error == "" && s.Load != nil && s.Load.Interrupted {
			if cut++; firstCut == "" {
				firstCut = s.Key + ": " + strings.Join(s.Verdict.Reasons, "; ")
			}
		}
	}
	n := len(res.samples)
	switch {
	case res.interrupted && n == 0 && res.partial != nil && res.partial.Load != nil:
		msg := fmt.Sprintf("interrupted: the figures above cover the %.1f s that ran", res.partial.Load.Seconds)
		if res.path != "" {
			msg += fmt.Sprintf("; %s holds no sample yet (--resume measures it again)", res.path)
		}
		return errors.New(msg)
	case res.interrupted:
		return fmt.Errorf("interrupted: %d of %d samples ran; the figures above cover what finished", n, len(res.plan.Samples))
	case failed == 1 && n == 1:
		return errors.New(first)
	case failed > 0 && failed == n:
		return fmt.Errorf("all %d samples failed; the first: %s", n, first)
	case failUnhealthy && unhealthy > 0:
		if failed > 0 {
			return fmt.Errorf("%w: %d of %d samples UNHEALTHY, %d of them failed; the first: %s", exitcode.ErrUnhealthy, unhealthy, n, failed, first)
		}
		return fmt.Errorf("%w: %d of %d samples", exitcode.ErrUnhealthy, unhealthy, n)
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "benchrig: %d of %d samples failed (exit 0; --fail-unhealthy exits 3); the first: %s\n", failed, n, first)
	}
	if cut > 0 {
		fmt.Fprintf(stderr, "benchrig: %d of %d samples UNHEALTHY with their load window cut short (exit 0; --fail-unhealthy exits 3); the first: %s\n", cut, n, firstCut)
	}
	return nil
}
