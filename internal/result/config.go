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

// EngineConfig is the load engine's configuration (load.Config).
type EngineConfig struct {
	Connections int     `json:"connections"`
	Pipeline    int     `json:"pipeline"`
	Rate        float64 `json:"rate,omitempty"`
	Arrival     string  `json:"arrival,omitempty"`
	Seed        uint64  `json:"seed,omitempty"`
	MaxBacklog  int     `json:"max_backlog,omitempty"`
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
