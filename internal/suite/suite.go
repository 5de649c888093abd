package suite

import "time"

// Suite is a parsed, validated benchmark suite: what to start, what to send
// to it, and the matrix of load settings to measure. It is plain data; after
// ApplyOverrides, Resolved records it in every results file. Plan and
// ApplyOverrides validate the suite again and so must not run concurrently
// on one Suite.
type Suite struct {
	// Name identifies the suite in reports and results files.
	Name string `json:"name"`
	// Seed seeds every pseudo-random choice of a run (Poisson arrivals, zipf
	// keys); each sample derives its own seed from it (Sample.Seed).
	Seed uint64 `json:"seed"`
	// Repeats is how many samples of every cell are measured (default 3).
	Repeats int `json:"repeats"`
	// Requests bounds each sample's load phase to this many requests; 0
	// bounds it by Phases.Load only. With both set, whichever comes first
	// ends the sample.
	Requests int64 `json:"requests"`
	// Arrival is how requests arrive at a rate: constant (default) or
	// poisson (seeded by Seed).
	Arrival string `json:"arrival,omitempty"`
	// MaxBacklog bounds the due requests that may wait for a free
	// connection at a rate before sends are dropped (default rate × 1 s).
	MaxBacklog int `json:"max_backlog,omitempty"`
	// TimerSlack lets a rate's sender wake up to this long after a request
	// fell due, sending every request due by then at once (default 0: a
	// wake-up for each due time); at most 10ms.
	TimerSlack Duration `json:"timer_slack,omitempty"`
	// Sampler says how often the target's CPU and memory are sampled.
	Sampler Sampler `json:"sampler"`
	// Placement pins the client and the targets to CPUs.
	Placement Placement `json:"placement"`
	// Phases are the stages every sample goes through.
	Phases Phases `json:"phases"`
	// Thresholds decide whether a sample is healthy.
	Thresholds Thresholds `json:"thresholds"`
	// Targets are the systems under test, by name.
	Targets map[string]*Target `json:"targets"`
	// Paths are the named requests sent to targets, by name.
	Paths map[string]*Path `json:"paths"`
	// Workloads are the named key sequences and read/write mixes of pg and
	// RESP paths, by name.
	Workloads map[string]*Workload `json:"workloads,omitempty"`
	// Matrix lists the cells to measure.
	Matrix Matrix `json:"matrix"`
	// Search, when set, searches each cell's capacity (the highest
	// HEALTHY constant rate) instead of measuring set rates.
	Search *Search `json:"search,omitempty"`
	// SecretHeaders and SecretParams name more HTTP headers and URL query
	// parameters whose values are credentials, beyond the names package
	// secret recognises (token, key, auth, password…); their values are
	// never recorded, logged or shown.
	SecretHeaders []string `json:"secret_headers,omitempty"`
	SecretParams  []string `json:"secret_params,omitempty"`

	// Source is the file the suite was read from; set by Parse, not read
	// from YAML.
	Source Source `json:"-" yaml:"-"`
	// Overrides lists the environment variables and --set flags applied,
	// in order; set by ApplyOverrides, not read from YAML.
	Overrides []Override `json:"-" yaml:"-"`

	loc *located
}

// Source identifies the suite file: its name as given and the SHA-256 of its
// bytes, before any override.
type Source struct {
	// File is the name given to Parse or Load.
	File string `json:"file"`
	// SHA256 is the hex SHA-256 of the file's bytes.
	SHA256 string `json:"sha256"`
}

// Override is one environment variable or --set flag applied to a suite.
type Override struct {
	// From is "env" or "set".
	From string `json:"from"`
	// Name is the variable or key, as written (CONNECTIONS, connections).
	Name string `json:"name"`
	// Value is the value as written.
	Value string `json:"value"`
}

// Sampler configures the target resource sampler.
type Sampler struct {
	// Interval between samples of the target's CPU and memory; at least
	// 100ms (default 1s).
	Interval Duration `json:"interval"`
	// NoPSS turns PSS readings off (RSS only): each reading of a big
	// multi-process server's PSS costs the client CPU.
	NoPSS bool `json:"no_pss,omitempty"`
}

// Placement pins processes to CPUs, so the client and the system under test
// do not compete for the same cores.
type Placement struct {
	// ClientCPUs are the CPUs benchrig's load generator runs on.
	ClientCPUs CPUList `json:"client_cpus,omitempty"`
	// TargetCPUs are the CPUs targets run on unless a target sets its own.
	TargetCPUs CPUList `json:"target_cpus,omitempty"`
	// ClientGOMAXPROCS is benchrig's GOMAXPROCS in every sample; 0 keeps
	// the count of the CPUs it is pinned to, or the Go default.
	ClientGOMAXPROCS int `json:"client_gomaxprocs,omitempty"`
	// BusyPoll is how long the client's event loops poll before they
	// sleep in a closed-loop sample (ParseBusyPoll): "auto" (the
	// default, "": BusyPollAuto while the client runs on CPUs a pinned
	// target does not use, else off), "off", or a duration up to 1ms.
	BusyPoll string `json:"busy_poll,omitempty"`
	// IOUring says whether a closed-loop sample's event loops may go on
	// io_uring instead of epoll (ParseIOUring): "auto" (the default, "":
	// where the protocol's loop can, RESP's, PostgreSQL's and plain
	// HTTP/1.1's, while
	// they do not busy-poll and the kernel allows it) or "off".
	IOUring string `json:"io_uring,omitempty"`
	// Coalesce says whether event loops on io_uring may wait a little for
	// more answers before they handle the first (ParseCoalesce): "auto"
	// (the default, "": with 4 or more connections busy, at most 1 % of
	// the answers' moving-average latency and 50 µs; HTTP/2's loop) or "off".
	Coalesce string `json:"coalesce,omitempty"`
}

// Phases are the stages of one sample, in order. Any may be 0; Load must be
// > 0 unless Suite.Requests bounds the sample.
type Phases struct {
	// Baseline measures the idle target after the pre-flight checks.
	Baseline Duration `json:"baseline"`
	// Warmup sends load that is not measured.
	Warmup Duration `json:"warmup"`
	// Settle waits idle between warm-up and load.
	Settle Duration `json:"settle"`
	// Load is the measured window.
	Load Duration `json:"load"`
	// Recovery measures the target idle after the load.
	Recovery Duration `json:"recovery"`
}

// Total is the sum of the phases.
func (p Phases) Total() time.Duration {
	return p.Baseline.D() + p.Warmup.D() + p.Settle.D() + p.Load.D() + p.Recovery.D()
}

// Thresholds decide whether a sample is healthy (see DESIGN.md,
// "healthy"). The counts are the largest number tolerated.
type Thresholds struct {
	// Coverage is the least target coverage in percent, 0–100 (default 95).
	Coverage float64 `json:"coverage"`
	// P99 is the largest tolerated 99th-percentile latency (default 250ms).
	P99 Duration `json:"p99"`
	// Errors, Timeouts, Unexpected and Dropped are the largest tolerated
	// counts of each outcome (default 0).
	Errors     int64 `json:"errors"`
	Timeouts   int64 `json:"timeouts"`
	Unexpected int64 `json:"unexpected"`
	Dropped    int64 `json:"dropped"`
	// MaxMiss is the largest tolerated miss ratio of a read path (0–1:
	// reads answered without a value for a key ÷ reads answered). Unset:
	// 0 where benchrig filled the keys (a redis target's fill, a
	// PostgreSQL table it checked) or the target's or path's assertions
	// read the hits, else misses are reported but tolerated.
	MaxMiss *float64 `json:"max_miss,omitempty"`
}

// Defaults of a suite's optional settings.
const (
	DefaultRepeats         = 3
	DefaultSamplerInterval = Duration(time.Second)
	DefaultLoad            = Duration(10 * time.Second)
	DefaultCoverage        = 95.0
	DefaultP99             = Duration(250 * time.Millisecond)
	DefaultReadyTimeout    = Duration(30 * time.Second)
	// MaxBacklogLimit bounds max_backlog (due requests held at a rate).
	MaxBacklogLimit = 10_000_000
	// MinSamplerInterval is the shortest sampler interval accepted.
	MinSamplerInterval = Duration(100 * time.Millisecond)
)

// DefaultPhases are the phases of a suite that sets none: a 10 s load window
// and nothing else.
func DefaultPhases() Phases { return Phases{Load: DefaultLoad} }

// DefaultThresholds are the health thresholds of DESIGN.md.
func DefaultThresholds() Thresholds {
	return Thresholds{Coverage: DefaultCoverage, P99: DefaultP99}
}

// newSuite returns a suite holding every default, for decoding to fill.
func newSuite() *Suite {
	return &Suite{
		Repeats:    DefaultRepeats,
		Sampler:    Sampler{Interval: DefaultSamplerInterval},
		Phases:     DefaultPhases(),
		Thresholds: DefaultThresholds(),
		Matrix: Matrix{
			Batches:  []int{1},
			Pipeline: []int{1},
		},
	}
}
