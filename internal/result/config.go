package result

import "encoding/json"

// Config is the resolved configuration of one sample, as recorded in
// Sample.Config: the same shape for every command and protocol. Readers
// ignore fields they do not know (docs/results-schema.md).
type Config struct {
	// Cell is the plan cell the sample measured.
	Cell *CellConfig `json:"cell,omitempty"`
	// Engine is how the load engine drove the driver.
	Engine EngineConfig `json:"engine"`
	// Phases are the sample's planned phases.
	Phases Phases `json:"phases"`
	// Protocol names the driver ("http", "pg", "resp"); it tags Driver.
	Protocol string `json:"protocol,omitempty"`
	// Driver is the protocol driver's resolved configuration, secrets
	// redacted; its fields are those of the driver's Config
	// (internal/driver/<protocol>).
	Driver json.RawMessage `json:"driver,omitempty"`
	// System is the target kind's own options (a PostgreSQL server, a RESP
	// endpoint, a fill), secrets redacted; absent for command targets.
	System json.RawMessage `json:"system,omitempty"`
}

// CellConfig is a plan cell: target variant, path, workload and the numeric
// axes.
type CellConfig struct {
	ID          string            `json:"id"`
	Target      string            `json:"target"`
	Params      map[string]string `json:"params,omitempty"`
	Path        string            `json:"path"`
	Protocol    string            `json:"protocol"`
	Workload    string            `json:"workload,omitempty"`
	Connections int               `json:"connections"`
	Batch       int               `json:"batch"`
	Rate        float64           `json:"rate,omitempty"`
	Pipeline    int               `json:"pipeline"`
}

// EngineConfig is how the load engine drives a driver, as recorded: the
// settings of load.Config (which embeds it) but an agent's share.
type EngineConfig struct {
	// Connections is the number of connections (workers).
	Connections int `json:"connections"`
	// Pipeline is how many operations each connection keeps in flight:
	// in a closed loop they are sent together and their responses read in
	// order, as wrk and redis-benchmark do; at a rate only HTTP/2's (and
	// gRPC's) streams take more than 1.
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
	// 0 means rate × 1 s, capped at load.MaxBacklog; the backlog grows as
	// requests wait, it is not allocated up front.
	MaxBacklog int `json:"max_backlog,omitempty"`
	// TimerSlackUS lets a rate's sender wake up to this many microseconds
	// after a request fell due, to send every request due by then at once
	// (one wake-up for several, as h2load's and wrk2's millisecond timers
	// do); 0, the default, wakes for each due time. The lag is measured
	// and latency runs from the due time either way.
	TimerSlackUS int64 `json:"timer_slack_us,omitempty"`
}

// UnmarshalJSON reads a config, and the older shapes of results files too:
// the driver's settings under "http", "pg" or "resp" (quick modes and
// command targets before benchrig.results/v1 settled on "driver").
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config // no methods: no recursion
	var legacy struct {
		plain
		HTTP json.RawMessage `json:"http"`
		PG   json.RawMessage `json:"pg"`
		RESP json.RawMessage `json:"resp"`
	}
	if err := json.Unmarshal(b, &legacy); err != nil {
		return err
	}
	*c = Config(legacy.plain)
	for _, l := range []struct {
		proto string
		raw   json.RawMessage
	}{{"http", legacy.HTTP}, {"pg", legacy.PG}, {"resp", legacy.RESP}} {
		if len(c.Driver) == 0 && len(l.raw) > 0 {
			c.Driver = l.raw
			if c.Protocol == "" {
				c.Protocol = l.proto
			}
		}
	}
	return nil
}
