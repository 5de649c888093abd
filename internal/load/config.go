package load

import (
	"fmt"
	"time"

	"github.com/benchrig/benchrig/internal/result"
)

// Config is how the engine drives one driver: the settings a results file
// records (result.EngineConfig, embedded so its JSON fields stay at the top
// level) and, for an agent of a distributed run, its share of the cell.
type Config struct {
	result.EngineConfig
	// Share, when set, makes the engine send only its share of the
	// cell's schedule and sequence numbers (an agent of a distributed
	// run; see Share). Rate stays the whole cell's rate. Not recorded.
	Share *Share `json:"share,omitempty"`
	// Loops, when > 0, is the most event loops the engine opens (one per
	// usable core otherwise): fewer leave cores to a target on the same
	// machine. Not recorded here (the sample's placement says).
	Loops int `json:"-"`
}

// Window bounds one run of the engine: a duration, a request count, or both
// (whichever comes first).
type Window struct {
	Duration time.Duration `json:"duration"`
	Requests int64         `json:"requests,omitempty"`
}

// DefaultConfig is the closed-loop default of the quick mode (autocannon's).
func DefaultConfig() Config {
	return Config{EngineConfig: result.EngineConfig{Connections: 10, Pipeline: 1}}
}

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
	if c.TimerSlackUS < 0 || c.TimerSlackUS > MaxTimerSlack.Microseconds() {
		return fmt.Errorf("timer slack must be 0 to %s, got %dµs", MaxTimerSlack, c.TimerSlackUS)
	}
	if c.TimerSlackUS > 0 && c.Rate == 0 {
		return fmt.Errorf("timer slack %dµs needs a rate: it delays the wake-ups of a rate's schedule", c.TimerSlackUS)
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

// MaxTimerSlack bounds Config.TimerSlackUS: 10 ms, ten times the
// millisecond that event-loop peers' timers round to.
const MaxTimerSlack = 10 * time.Millisecond

// slack is the timer slack in nanoseconds.
func (c *Config) slack() int64 { return c.TimerSlackUS * 1000 }
