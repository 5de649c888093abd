package result

import "time"

// Cgroup is what the kernel counted for a target run under limits (a
// suite's limits:, the quick commands' --limit-* flags): the control group
// the target's whole process tree ran in for one sample, the limits written
// into it, and the group's own counters per phase and over the whole
// sample. It is absent for a target run without limits. Unlike the /proc
// figures of Server, these count every process that ever ran in the group,
// short-lived children reaped by nobody in the tree included, at the
// kernel's own resolution.
type Cgroup struct {
	// Limits are the limits asked for.
	Limits CgroupLimits `json:"limits"`
	// Version is the cgroup version of the hierarchy: 1 or 2.
	Version int `json:"version"`
	// Group is the group's directory name.
	Group string `json:"group,omitempty"`
	// Warnings are the limits that did nothing (a CPU limit of at least
	// the CPUs the target may run on, a swap limit on a machine without
	// swap, swap not accounted by the kernel), one sentence each.
	Warnings []string `json:"warnings,omitempty"`
	// Phases holds the counters of each phase, from its first sample to
	// the next phase's, in order.
	Phases []CgroupFigures `json:"phases,omitempty"`
	// Total holds the counters from the target's start to its end (or to
	// the sample's last reading when the target outlived it).
	Total *CgroupFigures `json:"total,omitempty"`
	// Timeline holds the group's readings once per sampler interval from
	// the first phase to the end: the over-time charts' throttling and
	// group memory.
	Timeline []CgroupPoint `json:"timeline,omitempty"`
	// End says which limit ended the target or held it ("killed by the
	// memory limit (512 MiB) at 511.8 MiB", "held at the pids limit (32):
	// fork failed 17 times"); empty when none did. A sample with an End
	// fails with it.
	End string `json:"end,omitempty"`
}

// CgroupLimits are the limits of a target, as a container runtime's
// --cpus, --memory, --memory-swap and --pids-limit give them. A zero field
// (nil SwapBytes) is no limit of that kind.
type CgroupLimits struct {
	// CPUs is the CPU time allowed per wall-clock second, in cores.
	CPUs float64 `json:"cpus,omitempty"`
	// MemoryBytes is the most memory the group may use.
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// SwapBytes is the swap the group may use beyond MemoryBytes.
	SwapBytes *int64 `json:"swap_bytes,omitempty"`
	// Pids is the most processes and threads the group may hold.
	Pids int64 `json:"pids,omitempty"`
}

// CgroupFigures are a group's counters over one stretch of time: growth
// for the cumulative ones, values at the end for the others. A counter the
// kernel does not offer (a version or kernel without it) is 0 and its JSON
// name is listed in Missing.
type CgroupFigures struct {
	// Phase names the phase; empty for a Cgroup's Total.
	Phase string `json:"phase,omitempty"`
	// WindowSeconds is the wall time between the two readings.
	WindowSeconds float64 `json:"window_s"`
	// CPUSeconds is the CPU time the whole group used (v1 cpuacct.usage,
	// v2 cpu.stat usage_usec), and Cores is CPUSeconds ÷ WindowSeconds.
	CPUSeconds float64 `json:"cpu_s"`
	Cores      float64 `json:"cores"`
	// Periods counts the CFS periods in which the group could run;
	// Throttled those in which it used up its quota, and ThrottledSeconds
	// is the time it then waited (cpu.stat nr_periods, nr_throttled,
	// throttled time). All 0 without a CPU limit.
	Periods          uint64  `json:"nr_periods"`
	Throttled        uint64  `json:"nr_throttled"`
	ThrottledSeconds float64 `json:"throttled_s"`
	// MemoryPeakBytes is the most memory the group held from the target's
	// start to the end of the stretch (v1 memory.max_usage_in_bytes, v2
	// memory.peak): the kernel keeps one peak per group, not per phase.
	MemoryPeakBytes uint64 `json:"memory_peak_bytes"`
	// OOMKills counts the processes the OOM killer killed in the group
	// (memory.oom_control or memory.events oom_kill).
	OOMKills uint64 `json:"oom_kills"`
	// PidsPeak is the most processes and threads the group held at once
	// from the target's start (pids.peak, on kernels that have it).
	PidsPeak uint64 `json:"pids_peak"`
	// PidsMaxEvents counts the forks refused at the pids limit (pids.events
	// max).
	PidsMaxEvents uint64 `json:"pids_max_events"`
	// Missing lists, sorted, the JSON names of the counters the kernel did
	// not offer.
	Missing []string `json:"missing,omitempty"`
}

// CgroupPoint is one reading of a group's counters: cumulative CPU and
// throttled seconds, the memory it holds and the OOM kills so far.
type CgroupPoint struct {
	Time             time.Time `json:"time"`
	CPUSeconds       float64   `json:"cpu_s"`
	ThrottledSeconds float64   `json:"throttled_s"`
	MemoryBytes      uint64    `json:"memory_bytes"`
	OOMKills         uint64    `json:"oom_kills,omitempty"`
}
