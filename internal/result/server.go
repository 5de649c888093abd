package result

import "time"

// Server is what the target used: the figures DESIGN.md defines, and every
// raw sample they were derived from.
type Server struct {
	Figures ServerFigures    `json:"figures"`
	Samples []ResourceSample `json:"samples"`
	// Placement records where client and server ran.
	Placement *Placement `json:"placement,omitempty"`
}

// Placement records CPU pinning of client and target.
type Placement struct {
	ClientCPUs string `json:"client_cpus,omitempty"`
	TargetCPUs string `json:"target_cpus,omitempty"`
}

// ResourceSample is one reading of the target's whole process tree.
type ResourceSample struct {
	Time    time.Time `json:"time"`
	Offset  float64   `json:"offset_s"`
	Phase   string    `json:"phase"`
	UserS   float64   `json:"user_s"`
	SystemS float64   `json:"system_s"`
	RSS     int64     `json:"rss_bytes"`
	PSS     int64     `json:"pss_bytes,omitempty"`
	Threads int       `json:"threads"`
	Procs   int       `json:"procs"`
	// RunNS is the tree's cumulative schedstat run time, where available.
	RunNS int64 `json:"run_ns,omitempty"`
}

// ServerFigures are derived from the samples (DESIGN.md definitions).
type ServerFigures struct {
	WindowSeconds float64 `json:"window_seconds"`
	CPUSeconds    float64 `json:"cpu_seconds"`
	Cores         float64 `json:"cores"`
	PctOfMachine  float64 `json:"pct_of_machine"`
	OnlineCPUs    int     `json:"online_cpus"`
	USPerRequest  float64 `json:"us_per_request"`

	RSSBaseline int64 `json:"rss_baseline_bytes"`
	RSSLoad     int64 `json:"rss_load_bytes"`
	RSSAfter    int64 `json:"rss_after_bytes"`
	RSSPeak     int64 `json:"rss_peak_bytes"`
	PSSBaseline int64 `json:"pss_baseline_bytes,omitempty"`
	PSSLoad     int64 `json:"pss_load_bytes,omitempty"`
	PSSAfter    int64 `json:"pss_after_bytes,omitempty"`
	PSSPeak     int64 `json:"pss_peak_bytes,omitempty"`
	MaxThreads  int   `json:"max_threads"`
	MaxProcs    int   `json:"max_procs"`
}
