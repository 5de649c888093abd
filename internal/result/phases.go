package result

import (
	"fmt"
	"time"
)

// Phases are a sample's planned phases, as Measure runs them and as
// Config.Phases records them (durations in nanoseconds, as Go's
// time.Duration encodes them). Any can be zero; Load or Requests bounds the
// recorded window.
type Phases struct {
	Baseline time.Duration `json:"baseline"`
	Warmup   time.Duration `json:"warmup"`
	Settle   time.Duration `json:"settle"`
	Load     time.Duration `json:"load"`
	Recovery time.Duration `json:"recovery"`
	// Requests bounds the load window by count (0: duration only).
	Requests int64 `json:"requests,omitempty"`
}

// Validate reports a negative phase or an unbounded load window.
func (p Phases) Validate() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"baseline", p.Baseline}, {"warmup", p.Warmup}, {"settle", p.Settle}, {"load", p.Load}, {"recovery", p.Recovery}} {
		if f.d < 0 {
			return fmt.Errorf("phase %s must be ≥ 0, got %s", f.name, f.d)
		}
	}
	if p.Requests < 0 {
		return fmt.Errorf("requests must be ≥ 0, got %d", p.Requests)
	}
	if p.Load == 0 && p.Requests == 0 {
		return fmt.Errorf("the load phase needs a duration > 0 or a request count")
	}
	return nil
}

// Total is the planned wall time of the phases (a count-bound load counts 0).
func (p Phases) Total() time.Duration {
	return p.Baseline + p.Warmup + p.Settle + p.Load + p.Recovery
}
