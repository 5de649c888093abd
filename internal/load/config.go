package load

import (
	"fmt"
	"time"

	"github.com/benchrig/benchrig/internal/result"
)

// Config is how the engine drives one driver. Plain data: the resolved config
// goes into every results file.
type Config struct {
	// Connections is the number of connections (workers).
	Connections int `json:"connections"`
	// Pipeline is how many operations each connection keeps in flight
	// (closed loop only): they are sent together and their responses read
	// in order, as wrk and redis-benchmark do.
	Pipeline int `json:"pipeline"`
	// Rate, when > 0, switches to constant arrival rate (requests per
	// second across all connections).
	Rate float64 `json:"rate,omitempty"`
	// Arrival is "constant" (default) or "poisson" in rate mode.
	Arrival string `json:"arrival,omitempty"`
	// Seed seeds Poisson arrivals.
	Seed uint64 `json:"seed,omitempty"`
	// MaxBacklog bounds how many due requests may wait for a free
	// connection in rate mode; beyond it sends are dropped and counted.
	// 0 means rate × 1 s, capped at MaxBacklog; the backlog grows as
	// requests wait, it is not allocated up front.
	MaxBacklog int `json:"max_backlog,omitempty"`
	// Share, when set, makes the engine send only its share of the
	// cell's schedule and sequence numbers (an agent of a distributed
	// run; see Share). Rate stays the whole cell's rate.
	Share *Share `json:"share,omitempty"`
}

// Record returns the configuration as the results file records it.
func (c Config) Record() result.EngineConfig {
	return result.EngineConfig{Connections: c.Connections, Pipeline: c.Pipeline, Rate: c.Rate, Arrival: c.Arrival, Seed: c.Seed, MaxBacklog: c.MaxBacklog}
}

// Window bounds one run of the engine: a duration, a request count, or both
// (whichever comes first).
type Window struct {
	Duration time.Duration `json:"duration"`
	Requests int64         `json:"requests,omitempty"`
}

// DefaultConfig is the closed-loop default of the quick mode (autocannon's).
func DefaultConfig() Config { return Config{Connections: 10, Pipeline: 1} }

// Validate reports the first invalid field in the words of the CLI.
func (c *Config) Validate() error {
	if c.Connections < 1 {
		return fmt.Errorf("connections must be ≥ 1, got %d", c.Connections)
	}
	if c.Pipeline < 1 {
		return fmt.Errorf("pipeline must be ≥ 1, got %d", c.Pipeline)
	}
	if c.Rate != 0 {
		if err := ValidateRate(c.Rate); err != nil {
			return err
		}
	}
	if c.Rate > 0 && c.Pipeline > 1 {
		return fmt.Errorf("pipeline %d cannot be combined with a rate: in rate mode each request is sent when due", c.Pipeline)
	}
	switch c.Arrival {
	case "", "constant", "poisson":
	default:
		return fmt.Errorf("arrival must be constant or poisson, got %q", c.Arrival)
	}
	if c.Share != nil {
		if err := c.Share.Validate(); err != nil {
			return err
		}
	}
	if c.MaxBacklog < 0 || c.MaxBacklog > MaxBacklog {
		return fmt.Errorf("max backlog must be 1 to %d (0: rate × 1 s, capped there), got %d", MaxBacklog, c.MaxBacklog)
	}
	return nil
}

// Validate reports an unbounded or negative window.
func (w Window) Validate() error {
	if w.Duration < 0 {
		return fmt.Errorf("duration must be > 0, got %s", w.Duration)
	}
	if w.Requests < 0 {
		return fmt.Errorf("requests must be ≥ 1, got %d", w.Requests)
	}
	if w.Duration == 0 && w.Requests == 0 {
		return fmt.Errorf("a window needs a duration > 0 or a request count ≥ 1")
	}
	return nil
}

func (c *Config) backlog() int {
	if c.MaxBacklog > 0 {
		return c.MaxBacklog
	}
	b := int(c.Rate)
	if b < 1 {
		b = 1
	}
	return b
}
