package suite

import (
	"time"

	"github.com/benchrig/benchrig/internal/capacity"
)

// SmokePhases are the phases of a smoke plan: a half-second warm-up and a
// one-second load, nothing else.
func SmokePhases() Phases {
	return Phases{Warmup: Duration(500 * time.Millisecond), Load: Duration(time.Second)}
}

// Smoke returns a copy of p that runs every cell once, in cell order, with
// SmokePhases, marked IsSmoke. It checks that a suite runs end to end; its
// figures are not results. A request bound, if any, is kept, but the
// one-second load bounds every sample.
func (p *Plan) Smoke() *Plan {
	out := *p
	out.IsSmoke = true
	out.Search = nil // a smoke run measures each cell once, closed loop
	out.Repeats = 1
	out.Phases = SmokePhases()
	out.Cells = append([]Cell(nil), p.Cells...)
	out.Samples = make([]Sample, 0, len(out.Cells))
	for i := range out.Cells {
		out.Samples = append(out.Samples, out.sample(i, 1))
	}
	return &out
}

// Estimate returns the expected wall time of the plan: for every sample,
// startup (starting and stopping the target, readiness, checks) plus the
// sum of its phases. A load phase also bounded by a request count at a
// constant rate lasts requests ÷ rate when that is shorter. A closed-loop
// sample bounded only by a request count has no known length and counts
// its other phases only (see CountBounded).
func (p *Plan) Estimate(startup time.Duration) time.Duration {
	if p.Search != nil {
		_, d := p.SearchWorstCase(startup)
		return d
	}
	var total time.Duration
	for _, s := range p.Samples {
		total += p.sampleEstimate(p.Cells[s.Cell], startup)
	}
	return total
}

// sampleEstimate is the expected wall time of one sample of cell c.
func (p *Plan) sampleEstimate(c Cell, startup time.Duration) time.Duration {
	load := p.Phases.Load.D()
	if p.Requests > 0 && c.Rate > 0 {
		byCount := time.Duration(float64(p.Requests) / c.Rate * float64(time.Second))
		if load == 0 || byCount < load {
			load = byCount
		}
	}
	return startup + p.Phases.Total() - p.Phases.Load.D() + load
}

// SearchWorstCase is a search plan's worst case: the most steps (samples)
// its searches can take over all its cells, and their wall time.
func (p *Plan) SearchWorstCase(startup time.Duration) (steps int, d time.Duration) {
	if p.Search == nil {
		return 0, 0
	}
	for _, c := range p.Cells {
		n, t := capacity.WorstCase(p.Search.Config(p.sampleEstimate(c, startup)))
		steps += n
		d += t
	}
	return steps, d
}

// CountBounded reports whether some samples end only after a request count
// in closed loop, whose length Estimate cannot know.
func (p *Plan) CountBounded() bool {
	if p.Phases.Load > 0 || p.Requests == 0 {
		return false
	}
	for _, c := range p.Cells {
		if c.Rate == 0 {
			return true
		}
	}
	return false
}
