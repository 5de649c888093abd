package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// errCut is returned by runner.step when MaxTime leaves no time for the
// next step.
var errCut = errors.New("capacity: MaxTime reached")

// Search runs cfg.Searches searches with p and returns their result.
//
// done are steps already finished (by an interrupted run, read from its
// results file), in the order they were taken: Search replays them
// without probing, and probes from the first step past them. Each must
// be the step the search takes at that point (same search, phase, index
// and rate), else Search returns an error naming it; so must their
// number fit the search.
//
// MaxTime counts each replayed step at StepTime and the steps probed by
// this call at the time they took. When it leaves no time for a step the
// search stops there with Result.Cut set; that is not an error.
//
// An error from p, or ctx ending, aborts the search: Search returns it
// with the result of the steps taken so far.
func Search(ctx context.Context, cfg Config, p Prober, done []StepResult) (Result, error) {
	return search(ctx, cfg, p, done, time.Now)
}

// search is Search with its clock.
func search(ctx context.Context, cfg Config, p Prober, done []StepResult, now func() time.Time) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	cfg = cfg.withDefaults()
	r := &runner{cfg: cfg, p: p, done: done, now: now, start: now()}
	res := Result{Config: cfg}
	for n := 1; n <= cfg.Searches; n++ {
		sr, err := r.search(ctx, n)
		res.Searches = append(res.Searches, sr)
		if errors.Is(err, errCut) {
			res.Cut = true
			break
		}
		if err != nil {
			res.summarize()
			return res, err
		}
	}
	if r.next < len(done) {
		res.summarize()
		return res, fmt.Errorf("capacity: resume: finished step %d of %d (%s) is past the end of the search", r.next+1, len(done), done[r.next].Step)
	}
	res.summarize()
	return res, nil
}

// runner takes steps: replayed from done while they last, then probed.
type runner struct {
	cfg      Config
	p        Prober
	done     []StepResult
	next     int // the first step of done not replayed yet
	now      func() time.Time
	start    time.Time
	replayed int
}

// sameRate reports whether a replayed rate is the one the search
// computed, allowing for a results file's rounding.
func sameRate(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// step replays or probes s.
func (r *runner) step(ctx context.Context, s Step) (Outcome, error) {
	if r.next < len(r.done) {
		d := r.done[r.next]
		if d.Step.Search != s.Search || d.Step.Phase != s.Phase || d.Step.Index != s.Index || !sameRate(d.Step.Rate, s.Rate) {
			return Outcome{}, fmt.Errorf("capacity: resume: finished step %d (%s) is not the step the search takes there (%s)", r.next+1, d.Step, s)
		}
		r.next++
		r.replayed++
		return d.Outcome, nil
	}
	if r.cfg.MaxTime > 0 {
		spent := r.now().Sub(r.start) + time.Duration(r.replayed)*r.cfg.StepTime
		if spent >= r.cfg.MaxTime || spent+r.cfg.StepTime > r.cfg.MaxTime {
			return Outcome{}, errCut
		}
	}
	if err := ctx.Err(); err != nil {
		return Outcome{}, fmt.Errorf("capacity: before %s: %w", s, err)
	}
	o, err := r.p.Probe(ctx, s)
	if err != nil {
		return Outcome{}, fmt.Errorf("capacity: %s: %w", s, err)
	}
	return o, nil
}

// searchState is one search under way.
type searchState struct {
	r   *runner
	ctx context.Context
	sr  *SearchResult
}

// probe takes the search's next step at rate in phase ph.
func (s *searchState) probe(ph Phase, rate float64) (bool, error) {
	st := Step{Search: s.sr.Search, Phase: ph, Index: len(s.sr.Steps) + 1, Rate: rate}
	o, err := s.r.step(s.ctx, st)
	if err != nil {
		return false, err
	}
	s.sr.Steps = append(s.sr.Steps, StepResult{Step: st, Outcome: o})
	return o.Healthy, nil
}

// search runs search number n. Its result holds the steps taken even
// when it returns an error (errCut included).
func (r *runner) search(ctx context.Context, n int) (sr SearchResult, err error) {
	sr.Search = n
	s := &searchState{r: r, ctx: ctx, sr: &sr}
	defer func() { sr.finish(r.cfg, err) }()
	cfg := r.cfg

	// Ladder.
	lo, hi := 0.0, 0.0
	for rate := cfg.From; ; rate = cfg.nextRung(rate) {
		ok, err := s.probe(PhaseLadder, rate)
		if err != nil {
			return sr, err
		}
		if !ok {
			hi = rate
			break
		}
		lo = rate
		if rate >= cfg.Max {
			break
		}
	}
	if lo == 0 {
		sr.Capacity = Estimate{Rate: cfg.From, Bound: BelowFrom}
		return sr, nil
	}

	// Bisection, only below an UNHEALTHY rung.
	if hi > 0 {
		for range cfg.bisectSteps(lo, hi) {
			mid := math.Sqrt(lo * hi)
			if !(mid > lo && mid < hi) {
				break // the bracket is down to adjacent floats
			}
			ok, err := s.probe(PhaseBisect, mid)
			if err != nil {
				return sr, err
			}
			if ok {
				lo = mid
			} else {
				hi = mid
			}
		}
	}

	// Confirmation, stepping down after a failure.
	c := lo
	if cfg.Confirm > 0 {
		for k := 1; ; k++ {
			held := true
			for range cfg.Confirm {
				ok, err := s.probe(PhaseConfirm, c)
				if err != nil {
					return sr, err
				}
				if !ok {
					held = false
					break
				}
			}
			if held {
				break
			}
			if c <= cfg.From {
				sr.Capacity = Estimate{Rate: cfg.From, Bound: BelowFrom}
				return sr, nil
			}
			sr.StepDowns++
			c = cfg.stepDown(c, k)
		}
	}
	sr.Capacity = Estimate{Rate: c, Bound: Exact}
	if c >= cfg.Max {
		sr.Capacity = Estimate{Rate: cfg.Max, Bound: AtLeastMax}
		return sr, nil
	}
	if cfg.Confirm > 0 {
		above := math.Min(c*(1+cfg.Resolution), cfg.Max)
		sr.AboveRate = above
		for range cfg.Confirm {
			ok, err := s.probe(PhaseConfirmAbove, above)
			if err != nil {
				return sr, err
			}
			sr.Above = append(sr.Above, sr.Steps[len(sr.Steps)-1])
			if ok {
				sr.AboveHealthy++
			}
		}
	}
	return sr, nil
}

// finish completes a search's result after its last step: the limiting
// reason, what its steps say of noise and, when it did not end, the
// bracket known so far.
func (sr *SearchResult) finish(cfg Config, err error) {
	if err != nil {
		sr.Capacity = Estimate{}
		sr.Cut = errors.Is(err, errCut)
		sr.Lo, sr.Hi = bracket(sr.Steps)
		return
	}
	for _, st := range sr.Steps {
		above := st.Step.Rate > sr.Capacity.Rate || sr.Capacity.Bound == BelowFrom
		if !st.Outcome.Healthy && above {
			sr.LimitingReason = slices.Clone(st.Outcome.Reasons)
			if len(sr.LimitingReason) == 0 {
				sr.LimitingReason = []string{"UNHEALTHY (no reason given)"}
			}
			break
		}
	}
	sr.Notes = noise(sr)
}

// bracket is the highest rate every sample of which was HEALTHY below
// the lowest rate with an UNHEALTHY sample, and that rate; 0 for either
// not seen.
func bracket(steps []StepResult) (lo, hi float64) {
	for _, st := range steps {
		if !st.Outcome.Healthy && (hi == 0 || st.Step.Rate < hi) {
			hi = st.Step.Rate
		}
	}
	for _, st := range steps {
		r := st.Step.Rate
		if !st.Outcome.Healthy || r <= lo || (hi > 0 && r >= hi) {
			continue
		}
		lo = r
	}
	return lo, hi
}

// noise says what a search's steps show of a target whose verdicts are
// not a function of the rate: a HEALTHY sample at or above an UNHEALTHY
// one, step-downs, HEALTHY samples above the capacity.
func noise(sr *SearchResult) []string {
	var notes []string
	lowBad := math.Inf(1)
	for _, st := range sr.Steps {
		if !st.Outcome.Healthy {
			lowBad = math.Min(lowBad, st.Step.Rate)
		}
	}
	for _, st := range sr.Steps {
		if st.Outcome.Healthy && st.Step.Rate >= lowBad {
			notes = append(notes, fmt.Sprintf("inconsistent verdicts: HEALTHY at %s/s, UNHEALTHY at %s/s", FormatRate(st.Step.Rate), FormatRate(lowBad)))
			break
		}
	}
	if sr.StepDowns > 0 {
		notes = append(notes, fmt.Sprintf("%d step-down(s): a rate HEALTHY in the search failed its confirmation", sr.StepDowns))
	}
	if sr.AboveHealthy > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d samples HEALTHY one resolution step above, at %s/s", sr.AboveHealthy, len(sr.Above), FormatRate(sr.AboveRate)))
	}
	return notes
}
