package execute

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/benchrig/benchrig/internal/calibrate"
	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
)

// runFloor measures benchrig's own floor for the plan's protocols, once,
// before the first sample (calibrate.RunFloor each, ≤ 1 s for all), or
// records that --no-calibrate skipped it.
func runFloor(ctx context.Context, p *suite.Plan, skip bool, stderr io.Writer) *result.Floor {
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
