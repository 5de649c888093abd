package history

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/benchrig/benchrig/internal/changepoint"
	"github.com/benchrig/benchrig/internal/report"
)

// DetectChanges is the change-point detector `history show` and `check`
// use: E-divisive means with a permutation test at the package's defaults
// (changepoint.Detect), seeded so a series always gets the same answer.
func DetectChanges(medians []float64) []changepoint.Point {
	pts, err := changepoint.Detect(medians, changepoint.Options{Seed: 1})
	if err != nil {
		return nil
	}
	return pts
}

// DefaultGates are what `history check` applies when no --fail-if is
// given: requests/s down or p99 up by more than 5 %, significantly.
var DefaultGates = []string{"req/s < -5%", "p99 > +5%"}

// gateFigure maps a gate's figure (report.Gate.Figure, compare's metric
// names) to the figure the history keeps.
var gateFigure = map[string]string{"Requests/s": "req/s", "p50": "p50", "p99": "p99", "Server µs/request": "server-us", "Server peak MiB": "peak-mem"}

// CheckOptions are `history check`'s.
type CheckOptions struct {
	// Gates are the --fail-if conditions, as compare writes them; each
	// must point the way its figure gets worse (req/s <, p99 >).
	Gates []string
	// Window is how many runs before the checked one, since the series'
	// last change point, the run is tested against (1 to 1000).
	Window int
	// Alpha is the U test's significance level.
	Alpha float64
	// AnyHost mixes hosts in a series, as show's --any-host.
	AnyHost bool
}

// CheckedGate is one gate applied to one series.
type CheckedGate struct {
	Gate, Cell, Variant string
	Verdict             changepoint.Verdict
	// Skipped says why the series could not be tested (no earlier run).
	Skipped string
}

// Check tests run (an imported run's id) against the runs before it in
// each of its series since their last change point, at most o.Window of
// them: per gate, a Mann–Whitney U test of the repeats and the change of
// medians past the gate's threshold (changepoint.Regressed). It returns
// every series tested, and the regressions among them.
func (s *Store) Check(ctx context.Context, run int64, o CheckOptions) (all, regressed []CheckedGate, err error) {
	if o.Window < 1 || o.Window > 1000 {
		return nil, nil, fmt.Errorf("--window %d: want 1 to 1000 earlier runs", o.Window)
	}
	gates := o.Gates
	if len(gates) == 0 {
		gates = DefaultGates
	}
	var info *Run
	runs, err := s.Runs(ctx)
	if err != nil {
		return nil, nil, err
	}
	for i := range runs {
		if runs[i].ID == run {
			info = &runs[i]
		}
	}
	if info == nil {
		return nil, nil, fmt.Errorf("run %d is not in the history (benchrig history list)", run)
	}
	for _, text := range gates {
		g, err := report.ParseGate(text)
		if err != nil {
			return nil, nil, err
		}
		name, ok := gateFigure[g.Figure]
		if !ok {
			return nil, nil, fmt.Errorf("--fail-if %q: the history keeps req/s, p50, p99, server-us and peak-mib, not %s", text, g.Figure)
		}
		f, _ := FigureNamed(name)
		better := -1
		if f.Higher {
			better = 1
		}
		if worse := (better > 0) == g.Less; !worse || (g.Less && g.Pct > 0) || (!g.Less && g.Pct < 0) {
			return nil, nil, fmt.Errorf("--fail-if %q: a history gate points the way %s gets worse: %s", text, name, worseExample(name, f.Higher))
		}
		threshold := g.Pct
		if threshold < 0 {
			threshold = -threshold
		}
		series, err := s.Series(ctx, f, Filter{Suite: info.Suite, Branch: info.Branch, AnyHost: o.AnyHost})
		if err != nil {
			return nil, nil, err
		}
		for i := range series {
			sr := &series[i]
			idx := -1
			for j, p := range sr.Points {
				if p.Run == run {
					idx = j
				}
			}
			if idx < 0 {
				continue // a series of another host or cell
			}
			cg := CheckedGate{Gate: text, Cell: sr.Cell, Variant: sr.Variant}
			before := sr.Points[:idx]
			if len(before) == 0 {
				cg.Skipped = "no earlier run in its series"
				all = append(all, cg)
				continue
			}
			start := 0
			medians := make([]float64, len(before))
			for j, p := range before {
				medians[j] = p.Median
			}
			for _, c := range DetectChanges(medians) {
				start = max(start, c.Index)
			}
			start = max(start, len(before)-o.Window)
			hist := make([][]float64, 0, len(before)-start)
			for _, p := range before[start:] {
				hist = append(hist, p.Values)
			}
			v, err := changepoint.Regressed(hist, sr.Points[idx].Values, better, threshold, o.Alpha)
			if err != nil {
				return nil, nil, fmt.Errorf("%s · %s: %w", sr.Cell, name, err)
			}
			cg.Verdict = v
			all = append(all, cg)
			if v.Regressed {
				regressed = append(regressed, cg)
			}
		}
	}
	return all, regressed, nil
}

func worseExample(name string, higher bool) string {
	if higher {
		return fmt.Sprintf("'%s < -5%%' (a fall)", name)
	}
	return fmt.Sprintf("'%s > +5%%' (a rise)", name)
}

// WriteChecked prints one line per series tested: the gate, the cell and
// variant, and the evidence (or why it was not tested).
func WriteChecked(w io.Writer, all []CheckedGate) error {
	if len(all) == 0 {
		_, err := fmt.Fprintln(w, "nothing to check: no series of the run holds a gate's figure")
		return err
	}
	for _, c := range all {
		ev := c.Skipped
		if ev == "" {
			ev = c.Verdict.Evidence
		}
		label := c.Cell
		if c.Variant != "" && !strings.Contains(label, c.Variant) {
			label += " · " + c.Variant
		}
		if _, err := fmt.Fprintf(w, "%s · %s: %s\n", c.Gate, label, ev); err != nil {
			return err
		}
	}
	return nil
}
