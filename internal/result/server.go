package result

import "time"

// Server is what the target used: the figures DESIGN.md defines, and every
// raw sample they were derived from.
type Server struct {
	Figures ServerFigures    `json:"figures"`
	Samples []ResourceSample `json:"samples"`
	// Placement records where client and server ran.
	Placement *Placement `json:"placement,omitempty"`
	// Cgroup is what the kernel counted for the target's control group,
	// when it ran under limits (see Cgroup); absent otherwise.
	Cgroup *Cgroup `json:"cgroup,omitempty"`
}

// Placement records CPU pinning of client and target.
type Placement struct {
	ClientCPUs string `json:"client_cpus,omitempty"`
	TargetCPUs string `json:"target_cpus,omitempty"`
	// ClientChosen: ClientCPUs were not asked for; benchrig took the CPUs
	// it may use that the pinned target does not.
	ClientChosen bool `json:"client_chosen,omitempty"`
	// ServerCPUs are the CPUs a server on this machine that benchrig did
	// not pin may run on (every thread of the target's process tree, or of
	// the processes listening on the loopback port the load goes to), when
	// they leave an online CPU out: pinned by taskset, a cpuset or its own
	// setting. The client then keeps off them as off TargetCPUs. Empty:
	// not pinned, not on this machine, or not found.
	ServerCPUs string `json:"server_cpus,omitempty"`
	// ClientLoops is the most event loops the client opened when it
	// shared every CPU with a target on this machine (half the usable
	// cores, at least one); 0: one per usable core, or pinned.
	ClientLoops int `json:"client_loops,omitempty"`
	// ClientGOMAXPROCS is benchrig's GOMAXPROCS in the sample when the
	// suite set it (placement.client_gomaxprocs), or when benchrig chose
	// it: as many as ClientLoops, beside an unpinned target on this
	// machine, unless GOMAXPROCS was in the environment.
	ClientGOMAXPROCS int `json:"client_gomaxprocs,omitempty"`
}

// ResourceSample is one reading of the whole process tree. CPU and run-time figures
// are cumulative (they only grow from sample to sample); memory, thread and
// process figures are the values at the time of the sample.
type ResourceSample struct {
	// Time is the wall-clock time of the reading, in UTC.
	Time time.Time `json:"time"`
	// Offset is the monotonic time of the reading in seconds since the
	// sampler started. Durations between samples are taken from Offset,
	// never from Time.
	Offset float64 `json:"offset_s"`
	// Phase is the phase current when the sample was taken (see
	// sample.Sampler.SetPhase and Mark).
	Phase string `json:"phase"`

	// CPUUser and CPUSystem are the tree's cumulative user and system CPU
	// seconds: utime+cutime and stime+cstime of every live process, kept
	// monotonic as processes come and go (see the accounting notes in
	// doc.go).
	CPUUser   float64 `json:"cpu_user_s"`
	CPUSystem float64 `json:"cpu_system_s"`

	// RSS is the sum of the resident set sizes of the live processes, in
	// bytes. Shared pages are counted once per process that maps them.
	RSS uint64 `json:"rss_bytes"`
	// PSS is the sum of the proportional set sizes (smaps_rollup) in bytes:
	// shared pages are divided among the processes sharing them. It is 0
	// when PSSUnavailable or PSSSkipped.
	PSS uint64 `json:"pss_bytes"`
	// PSSSkipped says that PSS was not read at this sample: it is read at
	// most every Config.PSSInterval, and at every Mark.
	PSSSkipped bool `json:"pss_skipped,omitempty"`
	// PSSUnavailable says that smaps_rollup could not be read for at least
	// one live process of the tree (permissions, kernel), so PSS is 0.
	PSSUnavailable bool `json:"pss_unavailable,omitempty"`

	// Threads is the sum of num_threads over the live processes.
	Threads int `json:"threads"`
	// Processes is the number of live (not zombie) processes in the tree.
	Processes int `json:"processes"`

	// SchedRunNS is the cumulative scheduler run time in nanoseconds of the
	// tree's threads (/proc/PID/task/TID/schedstat), counted from when each
	// thread was first seen. It does not include reaped children, so it is a
	// cross-check of CPU, not a replacement.
	SchedRunNS uint64 `json:"sched_run_ns"`
	// SchedUnavailable says that schedstat could not be read for at least
	// one live process of the tree (kernel built without it), so SchedRunNS
	// is incomplete.
	SchedUnavailable bool `json:"sched_unavailable,omitempty"`
}

// CPU returns the sample's cumulative user+system CPU seconds.
func (s ResourceSample) CPU() float64 { return s.CPUUser + s.CPUSystem }

// ServerFigures are the server resource figures of one run, as DESIGN.md defines
// them. A figure that cannot be computed is 0 and its JSON name is listed in
// Missing.
type ServerFigures struct {
	// WindowSeconds is the time between the window's edge samples.
	WindowSeconds float64 `json:"window_s"`
	// CPUSeconds is the tree's user+system CPU over the window, split into
	// CPUUserSeconds and CPUSystemSeconds.
	CPUSeconds       float64 `json:"cpu_s"`
	CPUUserSeconds   float64 `json:"cpu_user_s"`
	CPUSystemSeconds float64 `json:"cpu_system_s"`
	// SchedCPUSeconds is the growth of the schedstat run time over the
	// window: a cross-check of CPUSeconds at nanosecond resolution that
	// misses threads born and dead between two samples.
	SchedCPUSeconds float64 `json:"sched_cpu_s"`
	// Cores is CPUSeconds ÷ WindowSeconds.
	Cores float64 `json:"cores"`
	// MachinePercent is Cores ÷ online CPUs × 100.
	MachinePercent float64 `json:"machine_pct"`
	// MicrosPerRequest is CPUSeconds × 10⁶ ÷ completed requests.
	MicrosPerRequest float64 `json:"us_per_request"`
	// Completed and OnlineCPUs are the inputs given to Derive.
	Completed  int64 `json:"completed"`
	OnlineCPUs int   `json:"online_cpus"`

	// RSS and PSS medians of the baseline, load and recovery ("after")
	// phases, and the largest sample of the whole run, in bytes. PSS
	// figures use only the samples that read PSS.
	RSSBaseline uint64 `json:"rss_baseline_bytes"`
	RSSLoad     uint64 `json:"rss_load_bytes"`
	RSSAfter    uint64 `json:"rss_after_bytes"`
	RSSPeak     uint64 `json:"rss_peak_bytes"`
	PSSBaseline uint64 `json:"pss_baseline_bytes"`
	PSSLoad     uint64 `json:"pss_load_bytes"`
	PSSAfter    uint64 `json:"pss_after_bytes"`
	PSSPeak     uint64 `json:"pss_peak_bytes"`

	// MaxThreads and MaxProcesses are the largest counts of any sample.
	MaxThreads   int `json:"threads_max"`
	MaxProcesses int `json:"processes_max"`

	// Missing lists, sorted, the JSON names of the figures that could not be
	// computed: no window of two samples, no completed requests, no online
	// CPU count, a phase without samples, PSS or schedstat unreadable.
	Missing []string `json:"missing,omitempty"`
}
