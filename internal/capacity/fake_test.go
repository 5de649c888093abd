package capacity

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// knee is a fake target with a known capacity: HEALTHY iff the rate is
// at most C. Per, when set, gives each search its own capacity.
type knee struct {
	C     float64
	Per   map[int]float64
	calls int
	steps []Step
}

// capacity is the fake's capacity in search n.
func (k *knee) capacity(n int) float64 {
	if c, ok := k.Per[n]; ok {
		return c
	}
	return k.C
}

// Probe is HEALTHY iff s.Rate ≤ the capacity.
func (k *knee) Probe(_ context.Context, s Step) (Outcome, error) {
	k.calls++
	k.steps = append(k.steps, s)
	if s.Rate <= k.capacity(s.Search) {
		return Outcome{Healthy: true, Achieved: s.Rate}, nil
	}
	return Outcome{Reasons: []string{fmt.Sprintf("p99 over the bound at %s/s", FormatRate(s.Rate))}, Achieved: k.capacity(s.Search)}, nil
}

// noisy is a knee whose HEALTHY steps within Near below C turn UNHEALTHY
// with probability P, and whose UNHEALTHY steps within Near above C turn
// HEALTHY with probability Up, from a seeded RNG.
type noisy struct {
	C, Near, P, Up float64
	rng            *rand.Rand
	flips          int
}

// Probe is knee's verdict, flipped at random near C.
func (n *noisy) Probe(_ context.Context, s Step) (Outcome, error) {
	ok := s.Rate <= n.C
	switch {
	case ok && s.Rate >= n.C/(1+n.Near) && n.rng.Float64() < n.P:
		ok = false
		n.flips++
	case !ok && s.Rate <= n.C*(1+n.Near) && n.rng.Float64() < n.Up:
		ok = true
		n.flips++
	}
	if ok {
		return Outcome{Healthy: true}, nil
	}
	return Outcome{Reasons: []string{"errors over 1 %"}}, nil
}

// script answers each step from a function of the step.
type script func(s Step) bool

// Probe applies the script.
func (f script) Probe(_ context.Context, s Step) (Outcome, error) {
	if f(s) {
		return Outcome{Healthy: true}, nil
	}
	return Outcome{Reasons: []string{"scripted"}}, nil
}

// clockProber advances a fake clock by each step's duration.
type clockProber struct {
	Prober
	now  time.Time
	step time.Duration
}

// Probe advances the clock, then asks the inner prober.
func (c *clockProber) Probe(ctx context.Context, s Step) (Outcome, error) {
	c.now = c.now.Add(c.step)
	return c.Prober.Probe(ctx, s)
}

// clock is the fake clock's reading.
func (c *clockProber) clock() time.Time { return c.now }

// checkInvariants fails t unless res keeps the properties every search
// keeps, whatever the target: no more steps than WorstCase, indices in
// order, and no capacity at or above the first UNHEALTHY rate the search
// saw.
func checkInvariants(t testing.TB, cfg Config, res Result) {
	t.Helper()
	worst, _ := WorstCase(cfg)
	total := 0
	for _, sr := range res.Searches {
		total += len(sr.Steps)
		firstBad := 0.0
		for i, st := range sr.Steps {
			if st.Step.Index != i+1 || st.Step.Search != sr.Search {
				t.Fatalf("search %d step %d is %s", sr.Search, i+1, st.Step)
			}
			if st.Step.Rate < res.Config.From*(1-1e-12) || st.Step.Rate > res.Config.Max*(1+1e-12) {
				t.Fatalf("%s outside From %v – Max %v", st.Step, res.Config.From, res.Config.Max)
			}
			if !st.Outcome.Healthy && firstBad == 0 {
				firstBad = st.Step.Rate
			}
		}
		c := sr.Capacity
		if c.Bound != BelowFrom && c.Bound != "" && firstBad > 0 && c.Rate >= firstBad {
			t.Fatalf("search %d: capacity %s at or above the first UNHEALTHY rate %v", sr.Search, c, firstBad)
		}
	}
	if total > worst {
		t.Fatalf("%d steps, over WorstCase %d for %+v", total, worst, cfg)
	}
}
