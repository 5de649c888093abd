// Package floor measures benchrig's own floor, its latency and client CPU
// per request against a null peer: once before a run's first sample, and
// as benchrig calibrate prints it.
package floor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/calibrate"
	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
)

// BeforeRun measures benchrig's own floor for the plan's protocols, once,
// before the first sample (calibrate.RunFloor each, ≤ 1 s for all), or
// records that --no-calibrate skipped it.
func BeforeRun(ctx context.Context, p *suite.Plan, skip bool, stderr io.Writer) *result.Floor {
	if skip {
		return &result.Floor{Skipped: "--no-calibrate"}
	}
	seen := map[string]bool{}
	var protocols []string
	for _, c := range p.Cells {
		if q := string(c.Protocol); !seen[q] {
			seen[q] = true
			protocols = append(protocols, q)
		}
	}
	t0 := time.Now()
	f := calibrate.Measure(ctx, protocols, calibrate.RunFloor)
	if stderr != nil {
		fmt.Fprintf(stderr, "%s [measured in %s]\n", report.FloorLine(f), time.Since(t0).Round(10*time.Millisecond))
	}
	return f
}

// Calibrate is `benchrig calibrate`: the floor of each protocol measured
// for d, printed as a table and the floor line, or as JSON.
func Calibrate(ctx context.Context, stdout io.Writer, d time.Duration, protocols []string, asJSON bool) error {
	if d < calibrate.MinDuration || d > calibrate.MaxDuration {
		return exitcode.Usagef("--duration must be between %s and %s, got %s", calibrate.MinDuration, calibrate.MaxDuration, d)
	}
	for _, p := range protocols {
		if !isCalibrated(p) {
			return exitcode.Usagef("--protocols: unknown protocol %q; accepted: %s", p, strings.Join(calibrate.Protocols(), ", "))
		}
	}
	f := calibrate.Measure(ctx, protocols, d)
	if asJSON {
		b, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	fmt.Fprintf(stdout, "benchrig's own floor: one connection, closed loop, %s per protocol against a null peer on 127.0.0.1\n\n", d)
	if err := report.FloorTable(stdout, f); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "\n%s\n", report.FloorLine(f))
	return err
}

// isCalibrated says whether calibrate has a null peer for protocol p.
func isCalibrated(p string) bool {
	for _, q := range calibrate.Protocols() {
		if p == q {
			return true
		}
	}
	return false
}
