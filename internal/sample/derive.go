package sample

import (
	"github.com/benchrig/benchrig/internal/result"
	"slices"
	"time"
)

// Window selects the span of samples over which Derive measures CPU: either a
// phase (Phase set) or a time range (Start and End set). Phase wins when both
// are given.
type Window struct {
	// Phase names the phase whose span is measured: from its first sample
	// to the sample that follows its last one (the first sample of the next
	// phase, which Sampler.Mark takes exactly when the phase ends), or to
	// its last sample when nothing follows.
	Phase string `json:"phase,omitempty"`
	// Start and End bound a time range: from the first sample at or after
	// Start to the last sample at or before End.
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
}

// Figures are the server resource figures of one run, as DESIGN.md defines
// them. The type lives in package result (result.ServerFigures) so results
// files and reports use it without the sampler's code.
type Figures = result.ServerFigures

// Derive computes the figures of a run from its samples (in time order, as
// Sampler.Stop returns them), the window of the load, the number of requests
// completed in it and the number of online CPUs. It is a pure function.
func Derive(samples []Sample, w Window, completed int64, onlineCPUs int) Figures {
	f := Figures{Completed: completed, OnlineCPUs: onlineCPUs}
	var missing []string
	miss := func(names ...string) { missing = append(missing, names...) }

	if i, j, ok := edges(samples, w); ok {
		a, b := samples[i], samples[j]
		f.WindowSeconds = b.Offset - a.Offset
		f.CPUUserSeconds = max(b.CPUUser-a.CPUUser, 0)
		f.CPUSystemSeconds = max(b.CPUSystem-a.CPUSystem, 0)
		f.CPUSeconds = f.CPUUserSeconds + f.CPUSystemSeconds
		f.Cores = f.CPUSeconds / f.WindowSeconds
		if onlineCPUs > 0 {
			f.MachinePercent = f.Cores / float64(onlineCPUs) * 100
		} else {
			miss("machine_pct")
		}
		if completed > 0 {
			f.MicrosPerRequest = f.CPUSeconds * 1e6 / float64(completed)
		} else {
			miss("us_per_request")
		}
		if a.SchedUnavailable || b.SchedUnavailable {
			miss("sched_cpu_s")
		} else if b.SchedRunNS >= a.SchedRunNS {
			f.SchedCPUSeconds = float64(b.SchedRunNS-a.SchedRunNS) / 1e9
		}
	} else {
		miss("window_s", "cpu_s", "cpu_user_s", "cpu_system_s", "sched_cpu_s",
			"cores", "machine_pct", "us_per_request")
	}

	phases := []struct {
		name     string
		rss, pss *uint64
		rssName  string
		pssName  string
	}{
		{PhaseBaseline, &f.RSSBaseline, &f.PSSBaseline, "rss_baseline_bytes", "pss_baseline_bytes"},
		{PhaseLoad, &f.RSSLoad, &f.PSSLoad, "rss_load_bytes", "pss_load_bytes"},
		{PhaseRecovery, &f.RSSAfter, &f.PSSAfter, "rss_after_bytes", "pss_after_bytes"},
	}
	for _, ph := range phases {
		var rss, pss []uint64
		for _, s := range samples {
			if s.Phase != ph.name {
				continue
			}
			rss = append(rss, s.RSS)
			if hasPSS(s) {
				pss = append(pss, s.PSS)
			}
		}
		if len(rss) == 0 {
			miss(ph.rssName)
		}
		if len(pss) == 0 {
			miss(ph.pssName)
		}
		*ph.rss = median(rss)
		*ph.pss = median(pss)
	}

	pssSeen := false
	for _, s := range samples {
		f.RSSPeak = max(f.RSSPeak, s.RSS)
		if hasPSS(s) {
			pssSeen = true
			f.PSSPeak = max(f.PSSPeak, s.PSS)
		}
		f.MaxThreads = max(f.MaxThreads, s.Threads)
		f.MaxProcesses = max(f.MaxProcesses, s.Processes)
	}
	if len(samples) == 0 {
		miss("rss_peak_bytes", "threads_max", "processes_max")
	}
	if !pssSeen {
		miss("pss_peak_bytes")
	}

	slices.Sort(missing)
	f.Missing = slices.Compact(missing)
	return f
}

// hasPSS reports whether sample s holds a PSS reading.
func hasPSS(s Sample) bool { return !s.PSSUnavailable && !s.PSSSkipped }

// edges returns the indexes of the first and last sample of window w, and
// whether they span a positive time.
func edges(samples []Sample, w Window) (first, last int, ok bool) {
	first, last = -1, -1
	switch {
	case w.Phase != "":
		for i, s := range samples {
			if s.Phase != w.Phase {
				continue
			}
			if first < 0 {
				first = i
			}
			last = i
		}
		if last >= 0 && last+1 < len(samples) {
			last++ // the next phase's first sample closes this one
		}
	case !w.Start.IsZero() && !w.End.IsZero():
		for i, s := range samples {
			if first < 0 && !s.Time.Before(w.Start) {
				first = i
			}
			if !s.Time.After(w.End) {
				last = i
			}
		}
	}
	if first < 0 || last <= first || samples[last].Offset <= samples[first].Offset {
		return 0, 0, false
	}
	return first, last, true
}

// median returns the median of xs (the mean of the two middle values when
// their number is even), or 0 when xs is empty. It sorts xs.
func median(xs []uint64) uint64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	slices.Sort(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	a, b := xs[n/2-1], xs[n/2]
	return a/2 + b/2 + (a%2+b%2)/2
}
