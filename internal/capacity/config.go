package capacity

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Bounds and defaults of a Config.
const (
	// MinRate is the lowest From or Max accepted, requests per second.
	MinRate = 0.001
	// MaxRate is the highest From or Max accepted, requests per second.
	MaxRate = 10_000_000
	// DefaultResolution is the Resolution a zero Config.Resolution means.
	DefaultResolution = 0.05
	// MinResolution and MaxResolution bound Config.Resolution.
	MinResolution = 0.001
	// MaxResolution: see MinResolution.
	MaxResolution = 0.5
	// DefaultFactor is the Factor a zero Config.Factor means.
	DefaultFactor = 2.0
	// MinFactor and MaxFactor bound Config.Factor.
	MinFactor = 1.1
	// MaxFactor: see MinFactor.
	MaxFactor = 10.0
	// DefaultConfirm is the Confirm Defaults sets.
	DefaultConfirm = 3
	// MaxConfirm bounds Config.Confirm.
	MaxConfirm = 100
	// MaxSearches bounds Config.Searches.
	MaxSearches = 100
	// unitStepDowns is how many step-downs are one resolution step
	// each before the step-downs start doubling.
	unitStepDowns = 4
)

// Config is a rate search's settings. A zero Resolution, Factor or
// Searches means its default; Confirm is taken as it is (0 means no
// confirmation), so start from Defaults.
type Config struct {
	// From is the first rung of the ladder, requests per second.
	From float64 `json:"from"`
	// Max is the highest rate the search offers, requests per second.
	Max float64 `json:"max"`
	// Resolution is the relative width at which bisection stops
	// (hi/lo − 1 ≤ Resolution) and the size of a confirmation's step
	// above and step down. 0 means DefaultResolution.
	Resolution float64 `json:"resolution,omitempty"`
	// Factor is the ladder's ratio. 0 means DefaultFactor.
	Factor float64 `json:"factor,omitempty"`
	// Confirm is how many samples confirm the found rate, and how many
	// are taken one resolution step above it; 0 for no confirmation.
	Confirm int `json:"confirm"`
	// Searches is how many times the whole search runs. 0 means 1.
	Searches int `json:"searches,omitempty"`
	// MaxTime bounds the whole search; 0 for no bound. A step is not
	// started when the time spent plus StepTime would pass MaxTime.
	MaxTime time.Duration `json:"max_time,omitempty"`
	// StepTime is the estimated duration of one step (a sample with its
	// fresh target's start and stop), for MaxTime and WorstCase.
	StepTime time.Duration `json:"step_time,omitempty"`
}

// Defaults returns a Config from from to max with every other setting at
// its default: Resolution 5 %, Factor 2, Confirm 3, one search, no
// MaxTime.
func Defaults(from, max float64) Config {
	return Config{From: from, Max: max, Resolution: DefaultResolution, Factor: DefaultFactor, Confirm: DefaultConfirm, Searches: 1}
}

// withDefaults fills the zero settings that have a default.
func (c Config) withDefaults() Config {
	if c.Resolution == 0 {
		c.Resolution = DefaultResolution
	}
	if c.Factor == 0 {
		c.Factor = DefaultFactor
	}
	if c.Searches == 0 {
		c.Searches = 1
	}
	return c
}

// inRange reports whether x is a number within [lo, hi].
func inRange(x, lo, hi float64) bool { return x >= lo && x <= hi } // false for NaN

// Validate reports every setting out of its bounds, each naming the
// field, its value and what is accepted.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("capacity: "+format, a...)) }
	if !inRange(c.From, MinRate, MaxRate) {
		bad("From %v is out of bounds: accepted %v to %v requests/s", c.From, MinRate, FormatRate(MaxRate))
	}
	if !inRange(c.Max, MinRate, MaxRate) {
		bad("Max %v is out of bounds: accepted %v to %v requests/s", c.Max, MinRate, FormatRate(MaxRate))
	} else if c.From > c.Max {
		bad("Max %v is below From %v: accepted Max ≥ From", c.Max, c.From)
	}
	if !inRange(c.Resolution, MinResolution, MaxResolution) {
		bad("Resolution %v is out of bounds: accepted %v to %v (a fraction of the rate; 0 for the default %v)", c.Resolution, MinResolution, MaxResolution, DefaultResolution)
	}
	if !inRange(c.Factor, MinFactor, MaxFactor) {
		bad("Factor %v is out of bounds: accepted %v to %v (the ladder's ratio; 0 for the default %v)", c.Factor, MinFactor, MaxFactor, DefaultFactor)
	}
	if c.Confirm < 0 || c.Confirm > MaxConfirm {
		bad("Confirm %d is out of bounds: accepted 0 (no confirmation) to %d samples", c.Confirm, MaxConfirm)
	}
	if c.Searches < 1 || c.Searches > MaxSearches {
		bad("Searches %d is out of bounds: accepted 1 to %d (0 for the default 1)", c.Searches, MaxSearches)
	}
	if c.MaxTime < 0 {
		bad("MaxTime %v is negative: accepted 0 (no bound) or more", c.MaxTime)
	}
	if c.StepTime < 0 {
		bad("StepTime %v is negative: accepted 0 (unknown) or more", c.StepTime)
	}
	return errors.Join(errs...)
}

// nextRung is the ladder's rung after r, capped at Max.
func (c Config) nextRung(r float64) float64 { return math.Min(r*c.Factor, c.Max) }

// bisectSteps is how many geometric bisections bring the bracket lo–hi
// to hi/lo − 1 ≤ Resolution: each halves log(hi/lo). The search takes
// exactly this many, so WorstCase counts them exactly.
func (c Config) bisectSteps(lo, hi float64) int {
	w, t := math.Log(hi/lo), math.Log1p(c.Resolution)
	n := 0
	for ; w > t && n < 64; n++ {
		w /= 2
	}
	return n
}

// stepDown is the rate confirmed after the k-th failed confirmation
// (k from 1) at rate r: one resolution step down for the first
// unitStepDowns, then 2, 4, 8 … steps, never below From.
func (c Config) stepDown(r float64, k int) float64 {
	e := 1.0
	if k > unitStepDowns {
		e = math.Ldexp(1, min(k-unitStepDowns, 60))
	}
	return math.Max(r/math.Pow(1+c.Resolution, e), c.From)
}

// WorstCase is the most steps a search with c can take, over all its
// Searches, and their time at StepTime each (MaxTime does not cap it:
// compare the two). It counts every ladder rung to Max, the longest
// bisection of any rung's bracket, Confirm samples at every step-down
// from Max to From, and Confirm samples above. c is not validated: a
// Config Validate refuses gives 0 and 0.
func WorstCase(c Config) (steps int, d time.Duration) {
	if c.Validate() != nil {
		return 0, 0
	}
	c = c.withDefaults()
	rungs, bisect := 0, 0
	prev := 0.0
	for r := c.From; ; r = c.nextRung(r) {
		rungs++
		if prev > 0 {
			bisect = max(bisect, c.bisectSteps(prev, r))
		}
		if r >= c.Max {
			break
		}
		prev = r
	}
	per := rungs + bisect
	if c.Confirm > 0 {
		levels := 1
		for r, k := c.Max, 1; r > c.From; k++ {
			r = c.stepDown(r, k)
			levels++
		}
		per += (levels + 1) * c.Confirm
	}
	steps = per * c.Searches
	return steps, time.Duration(steps) * c.StepTime
}
