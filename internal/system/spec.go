package system

import (
	"context"
	"encoding/json"
	"time"

	"github.com/benchrig/benchrig/internal/cgroup"
	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/metrics"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/sample"
)

// Target is what a measurement needs of a system under test. *target.Process,
// *target.Attached and the ephemeral PostgreSQL and redis servers satisfy it.
type Target interface {
	// PID is the root of the process tree to sample (0: nothing to sample).
	PID() int
	Alive() bool
	Stop(ctx context.Context) error
}

// Limited is implemented by targets run under limits (a control group of
// their own, package cgroup): the group's kernel counters at any time, the
// record of the limits and how the target ended, and the limit that ended
// or held it (nil: none).
type Limited interface {
	Limits() *cgroup.Limits
	CgroupStats() (cgroup.Stats, error)
	CgroupRecord() *result.Cgroup
	LimitError() error
}

// Companioned is implemented by targets made of more than one process
// tree (a server and a sidecar beside it): the roots AlsoPIDs returns are
// sampled with PID's tree, as one target.
type Companioned interface {
	AlsoPIDs() []int
}

// Exiter is implemented by targets that can tell when and how they exited.
type Exiter interface {
	Exited() <-chan struct{}
	ExitStatus() string
}

// Logger is implemented by targets that capture a log.
type Logger interface {
	LogPath() string
	LogTail(n int) string
}

// Starter starts a fresh target for one sample and describes it.
type Starter func(ctx context.Context) (Target, *result.TargetInfo, error)

// Check is a response check run before and after the load.
type Check struct {
	Name string
	Run  func(ctx context.Context) error
}

// StatsSource reads cumulative target statistics (pg_stat_database,
// redis INFO): Measure records after − before over the load window.
type StatsSource interface {
	Snapshot(ctx context.Context) (map[string]float64, error)
}

// Spec is everything Measure needs for one sample.
type Spec struct {
	Key    string
	Cell   string
	Repeat int
	Smoke  bool
	// Case and Variant label the sample's row and column in reports.
	Case, Variant string

	Protocol string
	// Config is the resolved configuration recorded in the sample; the
	// runner builds it from the cell, Engine, Phases, DriverConfig and
	// SystemConfig.
	Config *result.Config
	// DriverConfig is the driver's resolved configuration as JSON, secrets
	// redacted (result.Config.Driver); SystemConfig the target kind's
	// options (result.Config.System). Systems set them.
	DriverConfig, SystemConfig json.RawMessage

	// Start starts a fresh target; nil means the system under test is
	// already there (an address, or Attach).
	Start Starter
	// Attach, when Start is nil, is an already running target to sample
	// (never started or stopped by benchrig).
	Attach     Target
	AttachInfo *result.TargetInfo

	// Companions are further process trees sampled beside the target,
	// through every phase, each recorded under its own name
	// (result.Sample.Companions); Headline names the one whose figures
	// are the headline ("" for the target itself).
	Companions []Companion
	Headline   string

	Driver     driver.Driver
	Engine     load.Config
	Phases     result.Phases
	PreChecks  []Check
	PostChecks []Check
	Stats      StatsSource
	// Judge, if set, adds the system's own reasons to the finished
	// sample's verdict (e.g. sampled values that differed).
	Judge      func(s *result.Sample)
	Thresholds result.Thresholds

	// Metrics, if set, is the target's own metrics endpoint, scraped
	// through every phase (package metrics).
	Metrics *metrics.Config

	// SamplerInterval is the resource sampling period (0: 1 s).
	SamplerInterval time.Duration
	// SamplerNoPSS turns the sampler's PSS readings off.
	SamplerNoPSS bool
	// ClientCPUs pins benchrig's load generation to these CPUs ("" none).
	ClientCPUs string
	// ClientGOMAXPROCS is benchrig's GOMAXPROCS during the sample (0:
	// chosen, see run.Measure).
	ClientGOMAXPROCS int
	// BusyPoll is how long the client's event loops poll before they
	// sleep (driver.SetBusyPoll): < 0 decides (suite.BusyPollAuto when the
	// client runs on CPUs a pinned target does not use, else off), 0 is
	// off.
	BusyPoll time.Duration
	// IOUringOff keeps the event loops on epoll (placement.io_uring off;
	// driver.SetIOUring).
	IOUringOff bool
	// CoalesceOff makes event loops on io_uring handle every answer as it
	// comes (placement.coalesce off; driver.SetCoalesce).
	CoalesceOff bool
	// OwnProcess says the process serves nothing of its own: beside an
	// unpinned target on this machine, the client's GOMAXPROCS then
	// follows its event loops (half the usable cores) unless
	// ClientGOMAXPROCS or GOMAXPROCS in the environment says otherwise.
	// Left false, GOMAXPROCS is the process's as it is: a server in the
	// same process (tests, embedders) would lose its Ps to the load.
	OwnProcess bool

	// OnPhase, if set, is told when each phase starts (for progress).
	OnPhase func(phase string, planned time.Duration)
	// OnEngine, if set, receives the engine once it is open (for a live
	// status line).
	OnEngine func(e load.Watched)
	// OnSampler, if set, receives the target's sampler once it runs (for
	// a live page: its latest reading, read at most once a second).
	OnSampler func(s *sample.Sampler)

	// Remote, when set, is how an agent of a distributed run rebuilds
	// Driver on its own machine: AddressDriver's inputs. nil when the
	// driver cannot be rebuilt elsewhere (the pg paths).
	Remote *Remote
}

// Remote is what an agent needs, beside the resolved suite and the cell, to
// build a sample's driver with AddressDriver: the placeholders ({port} and
// the params) and the address of a protocol reached by one (resp).
type Remote struct {
	Vars map[string]string `json:"vars,omitempty"`
	Addr string            `json:"addr,omitempty"`
}
