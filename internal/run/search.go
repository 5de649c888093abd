package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benchrig/benchrig/internal/capacity"
	"github.com/benchrig/benchrig/internal/result"
)

// errInterrupted ends a search whose context ended: the step in flight is
// not written (a resumed run measures it again).
var errInterrupted = errors.New("interrupted")

// Search runs the plan's capacity search (Plan.Search): for every cell in
// plan order, its searches of the highest HEALTHY constant rate, each step
// one sample of the cell at the step's rate, measured as Run measures a
// planned sample (fresh target process, phases, judge) and appended to w
// as it finishes, marked with its step (result.Sample.Search). done holds
// the steps a resumed run's file already has, by cell ID: they are
// replayed, not measured again. It returns each cell's result by cell ID.
func (r *Runner) Search(ctx context.Context, w Sink, done map[string][]capacity.StepResult) (map[string]capacity.Result, bool, error) {
	out := map[string]capacity.Result{}
	cfg := r.plan.SearchConfig()
	total, _ := capacity.WorstCase(cfg)
	total *= len(r.plan.Cells)
	idx := 0
	var measured time.Duration
	for ci, cell := range r.plan.Cells {
		prober := capacity.ProberFunc(func(ctx context.Context, st capacity.Step) (capacity.Outcome, error) {
			if ctx.Err() != nil {
				return capacity.Outcome{}, errInterrupted
			}
			key := result.SearchKey(cell.ID, st)
			c, ps := r.plan.SearchSample(ci, key, st.Rate)
			spec, err := r.spec(ctx, c, ps)
			if err != nil {
				return capacity.Outcome{}, fmt.Errorf("sample %s: %w", key, err)
			}
			idx++
			n := idx
			spec.OnPhase = func(phase string, planned time.Duration) {
				if r.opts.OnProgress != nil {
					r.opts.OnProgress(Progress{Index: n, Total: total, Key: key + fmt.Sprintf(" (%s %s/s)", st.Phase, capacity.FormatRate(st.Rate)), Phase: phase, PhasePlanned: planned})
				}
			}
			spec.OnEngine, spec.OnSampler = r.opts.OnEngine, r.opts.OnSampler
			t0 := time.Now()
			s, refused := measure(ctx, spec, r.opts.Executor, nil)
			measured += time.Since(t0)
			if refused != nil {
				return capacity.Outcome{}, refused
			}
			if ctx.Err() != nil {
				if r.opts.OnInterrupted != nil {
					r.opts.OnInterrupted(s)
				}
				return capacity.Outcome{}, errInterrupted
			}
			step := st
			s.Search = &step
			if err := w.Append(s); err != nil {
				return capacity.Outcome{}, err
			}
			if r.opts.OnSample != nil {
				r.opts.OnSample(n, total, s, 0)
			}
			return result.OutcomeOf(s), nil
		})
		res, err := capacity.Search(ctx, cfg, prober, done[cell.ID])
		out[cell.ID] = res
		if errors.Is(err, errInterrupted) {
			return out, true, nil
		}
		if err != nil {
			return out, false, fmt.Errorf("cell %s: %w", cell.ID, err)
		}
		if r.opts.OnSearch != nil {
			r.opts.OnSearch(cell.ID, res)
		}
	}
	return out, false, nil
}
