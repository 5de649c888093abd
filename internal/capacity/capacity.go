// Package capacity finds the highest constant arrival rate at which a
// target is HEALTHY: a rate search over samples the caller takes.
//
// The caller supplies a Prober. Each Probe is one fresh sample (a fresh
// target process, a load at the Step's rate, constant or Poisson
// arrivals: all the caller's business) and returns its verdict, HEALTHY
// or not, with the reasons. Nothing here measures anything.
//
// One search runs in three phases:
//
//   - ladder: From, From·Factor, From·Factor², … capped at Max, until the
//     first UNHEALTHY step. A target HEALTHY at Max is "≥ Max" (no
//     bisection); one UNHEALTHY at From is "< From".
//   - bisect: between the last HEALTHY rate lo and the first UNHEALTHY
//     rate hi, at the geometric mean √(lo·hi), until hi/lo − 1 ≤
//     Resolution. The geometric mean, not the arithmetic one, because
//     Resolution is relative: each geometric step halves log(hi/lo), so
//     the number of steps depends on the bracket's ratio alone
//     (⌈log₂(log(hi/lo)/log(1+Resolution))⌉, 4 for a ratio of 2 at 5 %)
//     whatever the scale, and the step count is known before the search
//     starts; an arithmetic mean splits the ratio unevenly (a ratio of 2
//     becomes 1.5 or 1.33), needing as many steps or one more.
//   - confirm: Confirm samples at the found rate c, then Confirm samples
//     one resolution step above, at c·(1+Resolution) (capped at Max). The
//     capacity is the highest rate HEALTHY in every confirming sample: the
//     first UNHEALTHY sample at c ends that rate's confirmation and steps
//     down, to c/(1+Resolution), and confirms again. The first four
//     step-downs are one resolution step each; later ones double (2, 4, 8
//     … resolution steps), so a target that holds far less than its
//     bisection showed (a noisy one) is reached in a logarithmic number of
//     confirmations. The last step-down is From; UNHEALTHY there is "<
//     From". The samples above c are all taken and kept beside the result
//     (how many were HEALTHY): they never raise the capacity, which
//     therefore never exceeds the first UNHEALTHY rate the search saw.
//     Confirm 0 skips this phase (the capacity is the bisection's lo).
//
// With Searches > 1 the whole search repeats and the capacity is the
// median of the searches with their minimum and maximum (see Result).
//
// The search is deterministic given the outcomes, so an interrupted run
// resumes: Search replays the steps it is given (from a results file)
// without probing them, as long as each is the step the search would
// take at that point.
package capacity

import (
	"context"
	"fmt"
	"math"
	"strconv"
)

// Phase is the part of a search a step belongs to.
type Phase string

// The phases of a search, in order.
const (
	// PhaseLadder is a rung of the geometric ladder From, From·Factor, ….
	PhaseLadder Phase = "ladder"
	// PhaseBisect is a step of the bisection between the last HEALTHY
	// and the first UNHEALTHY rate.
	PhaseBisect Phase = "bisect"
	// PhaseConfirm is a confirming sample at the found rate (or at a
	// rate stepped down from it).
	PhaseConfirm Phase = "confirm"
	// PhaseConfirmAbove is a sample one resolution step above the
	// confirmed rate.
	PhaseConfirmAbove Phase = "confirm-above"
)

// Step is one sample the search asks for.
type Step struct {
	// Search is the number of the search, 1 to Config.Searches.
	Search int `json:"search"`
	// Phase is the part of the search the step belongs to.
	Phase Phase `json:"phase"`
	// Index is the step's position in its search, counting from 1.
	Index int `json:"index"`
	// Rate is the arrival rate to offer, requests per second.
	Rate float64 `json:"rate"`
}

// String names the step, e.g. "search 1 step 7 (bisect) at 1414.2/s".
func (s Step) String() string {
	return fmt.Sprintf("search %d step %d (%s) at %s/s", s.Search, s.Index, s.Phase, FormatRate(s.Rate))
}

// Outcome is the verdict of one sample with what the caller measured.
type Outcome struct {
	// Healthy is the sample's verdict.
	Healthy bool `json:"healthy"`
	// Reasons say why a sample was UNHEALTHY (or anything the caller
	// noted of a HEALTHY one).
	Reasons []string `json:"reasons,omitempty"`
	// Achieved is the rate the sample achieved, requests per second;
	// 0 when not measured.
	Achieved float64 `json:"achieved,omitempty"`
	// P50 and P99 are the sample's latency quantiles in seconds; 0 when
	// not measured.
	P50 float64 `json:"p50,omitempty"`
	// P99: see P50.
	P99 float64 `json:"p99,omitempty"`
	// CPUPerRequest is the server's CPU time per request in
	// microseconds; 0 when not measured.
	CPUPerRequest float64 `json:"cpu_us_per_request,omitempty"`
}

// StepResult is a step taken with its outcome.
type StepResult struct {
	// Step is the step asked for.
	Step Step `json:"step"`
	// Outcome is its verdict.
	Outcome Outcome `json:"outcome"`
}

// Prober takes one sample at a step's rate. An error aborts the search.
type Prober interface {
	// Probe runs one fresh sample at s.Rate and returns its verdict.
	Probe(ctx context.Context, s Step) (Outcome, error)
}

// ProberFunc adapts a function to Prober.
type ProberFunc func(ctx context.Context, s Step) (Outcome, error)

// Probe calls f.
func (f ProberFunc) Probe(ctx context.Context, s Step) (Outcome, error) { return f(ctx, s) }

// Bound is the kind of a capacity figure.
type Bound string

// The kinds of a capacity figure.
const (
	// Exact: the rate was HEALTHY in every confirming sample and the
	// search saw a higher rate UNHEALTHY.
	Exact Bound = "exact"
	// AtLeastMax: HEALTHY at Max; the capacity is Max or more.
	AtLeastMax Bound = "at-least-max"
	// BelowFrom: UNHEALTHY at From; the capacity is below From.
	BelowFrom Bound = "below-from"
)

// Estimate is a capacity figure: a rate and what kind of figure it is.
// For AtLeastMax the rate is Max, for BelowFrom it is From.
type Estimate struct {
	// Rate is the capacity in requests per second (Max or From for
	// the bounds).
	Rate float64 `json:"rate"`
	// Bound is the kind of figure; empty when there is none (no search
	// finished).
	Bound Bound `json:"bound,omitempty"`
}

// String gives the figure as "1234/s", "≥ 100000/s" or "< 100/s";
// "none" when there is no figure.
func (e Estimate) String() string {
	switch e.Bound {
	case Exact:
		return FormatRate(e.Rate) + "/s"
	case AtLeastMax:
		return "≥ " + FormatRate(e.Rate) + "/s"
	case BelowFrom:
		return "< " + FormatRate(e.Rate) + "/s"
	}
	return "none"
}

// rank orders estimates: a rate, and among equal rates BelowFrom below
// Exact below AtLeastMax (BelowFrom's rate is From, which an Exact figure
// can equal; AtLeastMax's is Max, which no Exact figure reaches).
func (e Estimate) rank() int {
	switch e.Bound {
	case BelowFrom:
		return 0
	case Exact:
		return 1
	}
	return 2
}

// less orders estimates by rate, then by rank.
func (e Estimate) less(o Estimate) bool {
	if e.Rate != o.Rate {
		return e.Rate < o.Rate
	}
	return e.rank() < o.rank()
}

// FormatRate prints a rate rounded to 5 significant digits, without an
// exponent (1414.2, 100000, 0.5).
func FormatRate(r float64) string {
	if r == 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		return strconv.FormatFloat(r, 'g', -1, 64)
	}
	scale := math.Pow(10, 4-math.Floor(math.Log10(math.Abs(r))))
	return strconv.FormatFloat(math.Round(r*scale)/scale, 'f', -1, 64)
}
