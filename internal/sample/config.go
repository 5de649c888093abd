package sample

import (
	"fmt"
	"time"
)

// Defaults and limits of Config.
const (
	// DefaultRoot is the usual mount point of procfs.
	DefaultRoot = "/proc"
	// DefaultInterval is the sampling interval when Config.Interval is zero.
	DefaultInterval = time.Second
	// MinInterval is the shortest accepted sampling interval: below it the
	// sampler's own cost and the 10 ms resolution of /proc CPU times
	// dominate what it measures.
	MinInterval = 100 * time.Millisecond
	// DefaultPSSInterval is the time between PSS readings when
	// Config.PSSInterval is zero.
	DefaultPSSInterval = 5 * time.Second
)

// Config says which process tree to sample, where procfs is mounted and how
// often to sample. It is plain data: the resolved Config goes into results
// files.
type Config struct {
	// Root is the procfs mount point ("/proc"); tests point it at a fixture
	// tree. Empty means DefaultRoot.
	Root string `json:"root"`
	// clock, when set, is the sampler's clock for its PSS decisions (a
	// test's, so that no decision depends on how fast the machine was).
	clock func() time.Time
	// readMode, when set, is how the reader finds the tree (a test's: walk
	// or scan), instead of walk where the kernel has children files.
	readMode readMode
	// Interval is the time between periodic samples. Zero means
	// DefaultInterval; anything else below MinInterval is an error.
	Interval time.Duration `json:"interval"`
	// PSSInterval is the time between two readings of PSS. PSS comes from
	// /proc/PID/smaps_rollup, for which the kernel walks every mapped page
	// of the process: 50–100 µs for a small process, more for one that maps
	// a large shared memory (PostgreSQL's shared buffers), so reading it at
	// every sample of a 100-process tree would cost about 1 % of a core at
	// 1 s. Samples in between carry no PSS (Sample.PSSSkipped); samples
	// taken by Mark always read it. Zero means DefaultPSSInterval; a value
	// up to Interval reads PSS at every sample.
	PSSInterval time.Duration `json:"pss_interval"`
	// NoPSS turns PSS readings off altogether: every sample carries RSS
	// only and the PSS figures are missing. Reading the PSS of a big
	// multi-process server (PostgreSQL with gigabytes of shared buffers
	// mapped in 70 backends) costs the client ~0.1 s of CPU each time.
	NoPSS bool `json:"no_pss,omitempty"`
	// PID is the root of the sampled tree: that process and all its
	// descendants, rediscovered at every sample.
	PID int `json:"pid"`
	// Also are further roots sampled with PID's tree as one target (a
	// sidecar that runs beside a server): each process and its
	// descendants. One that exits leaves the tree; the tree ends with PID.
	Also []int `json:"also,omitempty"`
}

// DefaultConfig returns a Config with the default root, interval and PSS
// interval and no PID: the caller sets PID.
func DefaultConfig() Config {
	return Config{Root: DefaultRoot, Interval: DefaultInterval, PSSInterval: DefaultPSSInterval}
}

// resolved returns c with zero fields replaced by their defaults, or an error
// naming the first field that is out of range and what is accepted.
func (c Config) resolved() (Config, error) {
	if c.Root == "" {
		c.Root = DefaultRoot
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.PSSInterval == 0 {
		c.PSSInterval = DefaultPSSInterval
	}
	if c.Interval < MinInterval {
		return c, fmt.Errorf("sample config: interval %v is too short: use 0 for the default %v, or at least %v",
			c.Interval, DefaultInterval, MinInterval)
	}
	if c.PSSInterval < 0 {
		return c, fmt.Errorf("sample config: pss_interval %v is negative: use 0 for the default %v, or a duration (up to interval: every sample)",
			c.PSSInterval, DefaultPSSInterval)
	}
	if c.PID <= 0 {
		return c, fmt.Errorf("sample config: pid %d is not a process id: need the PID (> 0) of the tree's root process", c.PID)
	}
	return c, nil
}
