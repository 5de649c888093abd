package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/benchrig/benchrig/internal/cgroup"
	"github.com/benchrig/benchrig/internal/result"
)

// cgroupLoad is the load phase's figures of a sample's control group (nil
// for a target run without limits).
func cgroupLoad(s *result.Sample) *result.CgroupFigures {
	if !loadOK(s) || s.Server == nil || s.Server.Cgroup == nil {
		return nil
	}
	for i := range s.Server.Cgroup.Phases {
		if f := &s.Server.Cgroup.Phases[i]; f.Phase == "load" {
			return f
		}
	}
	return nil
}

// The kernel's counters of a limited target over the load window.
var (
	mCgCores = metric{name: "Cores (kernel)", unit: "cores", format: "%.2f", get: func(s *result.Sample) (float64, bool) {
		f := cgroupLoad(s)
		return valueIf(f != nil, func() float64 { return f.Cores })
	}}
	mCgThrottled = metric{name: "Throttled periods", unit: "%", format: "%.1f", better: -1, get: func(s *result.Sample) (float64, bool) {
		f := cgroupLoad(s)
		return valueIf(f != nil && f.Periods > 0, func() float64 { return 100 * float64(f.Throttled) / float64(f.Periods) })
	}}
	mCgThrottledS = metric{name: "Throttled time", unit: "s", format: "%.2f", better: -1, get: func(s *result.Sample) (float64, bool) {
		f := cgroupLoad(s)
		return valueIf(f != nil, func() float64 { return f.ThrottledSeconds })
	}}
	mCgMemPeak = metric{name: "Group memory peak", unit: "MiB", format: "%.1f", better: -1, get: func(s *result.Sample) (float64, bool) {
		f := cgroupLoad(s)
		return valueIf(f != nil, func() float64 { return float64(f.MemoryPeakBytes) / (1 << 20) })
	}}
	mCgOOM = metric{name: "OOM kills", format: "%.0f", better: -1, get: func(s *result.Sample) (float64, bool) {
		if s.Server == nil || s.Server.Cgroup == nil || s.Server.Cgroup.Total == nil {
			return 0, false
		}
		return float64(s.Server.Cgroup.Total.OOMKills), true
	}}
)

func valueIf(ok bool, v func() float64) (float64, bool) {
	if !ok {
		return 0, false
	}
	return v(), true
}

// LimitsText names a target's limits: "cpus 0.5 · memory 512 MiB · no
// swap · pids 256".
func LimitsText(l result.CgroupLimits) string {
	var parts []string
	if l.CPUs > 0 {
		parts = append(parts, fmt.Sprintf("cpus %g", l.CPUs))
	}
	if l.MemoryBytes > 0 {
		parts = append(parts, "memory "+cgroup.FormatMemory(l.MemoryBytes))
	}
	if l.SwapBytes != nil {
		if *l.SwapBytes == 0 {
			parts = append(parts, "no swap")
		} else {
			parts = append(parts, "swap "+cgroup.FormatMemory(*l.SwapBytes))
		}
	}
	if l.Pids > 0 {
		parts = append(parts, fmt.Sprintf("pids %d", l.Pids))
	}
	if len(parts) == 0 {
		return "none (counters only)"
	}
	return strings.Join(parts, " · ")
}

// addLimits adds the limits table to the resources section when any
// sample's target ran under limits: the limits of each variant, and the
// kernel's own counters of its control group over the load window.
func addLimits(sec *Section, g *grid, rows []Row) {
	var limits, warnings []string
	for _, r := range rows {
		s := r.Sample
		if s == nil || s.Server == nil || s.Server.Cgroup == nil {
			continue
		}
		if t := r.Variant + ": " + LimitsText(s.Server.Cgroup.Limits); !slices.Contains(limits, t) {
			limits = append(limits, t)
		}
		for _, w := range s.Server.Cgroup.Warnings {
			if t := r.Variant + ": " + w; !slices.Contains(warnings, t) && len(warnings) < 10 {
				warnings = append(warnings, t)
			}
		}
	}
	if len(limits) == 0 {
		return
	}
	sec.Text = append(sec.Text, "Targets under limits, each sample's process tree in a control group of its own: "+strings.Join(limits, "; ")+
		". The kernel's counters of the group include every process that ran in it, short-lived children the /proc samples may miss.")
	for _, w := range warnings {
		sec.Text = append(sec.Text, "Limits: "+w+".")
	}
	sec.Tables = append(sec.Tables, g.byCell("Under limits: the group's own counters over the load window", []metric{mCgCores, mServerCores, mCgThrottled, mCgThrottledS, mCgMemPeak, mCgOOM}, healthy))
}

// terminalLimits writes a limited target's group figures under the server
// table of the terminal report.
func terminalLimits(p *printer, srv *result.Server) {
	if srv == nil || srv.Cgroup == nil {
		return
	}
	cg := srv.Cgroup
	line := "Limits: " + LimitsText(cg.Limits)
	var f *result.CgroupFigures
	for i := range cg.Phases {
		if cg.Phases[i].Phase == "load" {
			f = &cg.Phases[i]
		}
	}
	if f != nil {
		line += fmt.Sprintf(" · load: %.2f cores by the group's count", f.Cores)
		if f.Periods > 0 {
			line += fmt.Sprintf(", throttled in %d of %d periods (%.2f s)", f.Throttled, f.Periods, f.ThrottledSeconds)
		}
		line += fmt.Sprintf(", memory peak %.1f MiB", float64(f.MemoryPeakBytes)/(1<<20))
	}
	p.f("%s.\n", line)
	for _, w := range cg.Warnings {
		p.f("Limits: %s.\n", w)
	}
	if cg.End != "" {
		p.f("Limits: %s.\n", cg.End)
	}
}

// cgroupSeries are a limited target's group readings over time: its cores
// by the kernel's count, the seconds per second its CPU limit held it back
// (dashed), and the memory it held (dashed, MiB); empty series for a target
// without limits.
func cgroupSeries(s *result.Sample, ax timeAxis) (cores, throttled, mem Series) {
	cores, throttled, mem = Series{Name: "group cores"}, Series{Name: "throttled s/s", Dashed: true}, Series{Name: "group memory", Dashed: true}
	if s.Server == nil || s.Server.Cgroup == nil || len(s.Server.Cgroup.Timeline) < 2 {
		return cores, throttled, mem
	}
	var xs, cpu, thr []float64
	for _, p := range s.Server.Cgroup.Timeline {
		x := ax.at(p.Time)
		xs, cpu, thr = append(xs, x), append(cpu, p.CPUSeconds), append(thr, p.ThrottledSeconds)
		mem.Points = append(mem.Points, Point{X: x, Y: float64(p.MemoryBytes) / (1 << 20)})
	}
	cores = rateSeries("group cores", xs, cpu)
	throttled = rateSeries("throttled s/s", xs, thr)
	throttled.Dashed = true
	if s.Server.Cgroup.Limits.CPUs == 0 {
		throttled.Points = nil // no CPU limit: nothing to hold back
	}
	return cores, throttled, mem
}
