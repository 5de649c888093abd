package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Counter is one reading of a kernel counter. OK is false when the kernel
// or the hierarchy's version does not offer it: Value is then 0 and means
// nothing, not a measured zero.
type Counter struct {
	Value uint64
	OK    bool
}

// String writes the value, or "unavailable" when the kernel does not offer it.
func (c Counter) String() string {
	if !c.OK {
		return "unavailable"
	}
	return strconv.FormatUint(c.Value, 10)
}

// Stats are a group's counters, read from the kernel's own files. The v1
// and v2 sources of each are named; a counter whose file (or line) is
// missing is not OK.
type Stats struct {
	CPUUsageNS  Counter // CPU time used, ns: v1 cpuacct.usage; v2 cpu.stat usage_usec
	NrPeriods   Counter // CFS periods with runnable tasks: cpu.stat nr_periods
	NrThrottled Counter // periods in which the quota ran out: cpu.stat nr_throttled
	ThrottledNS Counter // time throttled, ns: v1 cpu.stat throttled_time; v2 throttled_usec

	MemoryCurrent Counter // bytes: v1 memory.usage_in_bytes; v2 memory.current
	MemoryPeak    Counter // bytes: v1 memory.max_usage_in_bytes; v2 memory.peak
	MemoryFailcnt Counter // times usage hit the limit: v1 memory.failcnt (v2 has none)
	MemoryHigh    Counter // v2 memory.events high (v1 has none)
	MemoryMax     Counter // v2 memory.events max: times usage was about to exceed memory.max
	MemoryOOM     Counter // v2 memory.events oom: times the OOM state was entered
	MemoryOOMKill Counter // processes killed by the OOM killer: v2 memory.events oom_kill; v1 memory.oom_control oom_kill
	UnderOOM      Counter // 1 while the group is out of memory: v1 memory.oom_control under_oom

	PidsCurrent Counter // processes and threads now: pids.current
	PidsPeak    Counter // the most at once: pids.peak (newer kernels)
	PidsMax     Counter // forks refused at pids.max: pids.events max
}

// Stats reads the group's counters. It fails when the group is gone or a
// file that is there cannot be read or parsed.
func (g *Group) Stats() (Stats, error) {
	for _, dir := range g.order {
		if _, err := os.Stat(dir); err != nil {
			return Stats{}, fmt.Errorf("cgroup: stats of %s: %w", g.name, err)
		}
	}
	r := reader{}
	var s Stats
	if g.h.version == V1 {
		cpu, mem, pids := g.dirs["cpu"], g.dirs["memory"], g.dirs["pids"]
		s.CPUUsageNS = r.single(g.dirs["cpuacct"], "cpuacct.usage")
		st := r.keyed(cpu, "cpu.stat")
		s.NrPeriods, s.NrThrottled, s.ThrottledNS = st.get("nr_periods"), st.get("nr_throttled"), st.get("throttled_time")
		s.MemoryCurrent = r.single(mem, "memory.usage_in_bytes")
		s.MemoryPeak = r.single(mem, "memory.max_usage_in_bytes")
		s.MemoryFailcnt = r.single(mem, "memory.failcnt")
		oc := r.keyed(mem, "memory.oom_control")
		s.MemoryOOMKill, s.UnderOOM = oc.get("oom_kill"), oc.get("under_oom")
		s.PidsCurrent = r.single(pids, "pids.current")
		s.PidsPeak = r.single(pids, "pids.peak")
		s.PidsMax = r.keyed(pids, "pids.events").get("max")
	} else {
		dir := g.dirs[""]
		st := r.keyed(dir, "cpu.stat")
		s.CPUUsageNS, s.ThrottledNS = micro(st.get("usage_usec")), micro(st.get("throttled_usec"))
		s.NrPeriods, s.NrThrottled = st.get("nr_periods"), st.get("nr_throttled")
		s.MemoryCurrent = r.single(dir, "memory.current")
		s.MemoryPeak = r.single(dir, "memory.peak")
		ev := r.keyed(dir, "memory.events")
		s.MemoryHigh, s.MemoryMax, s.MemoryOOM, s.MemoryOOMKill = ev.get("high"), ev.get("max"), ev.get("oom"), ev.get("oom_kill")
		s.PidsCurrent = r.single(dir, "pids.current")
		s.PidsPeak = r.single(dir, "pids.peak")
		s.PidsMax = r.keyed(dir, "pids.events").get("max")
	}
	if r.err != nil {
		return Stats{}, fmt.Errorf("cgroup: stats of %s: %w", g.name, r.err)
	}
	return s, nil
}

func micro(c Counter) Counter {
	if c.OK {
		c.Value *= 1000
	}
	return c
}

// reader reads control files, keeping the first error; a missing file is
// not an error, only unavailable.
type reader struct{ err error }

func (r *reader) read(dir, file string) (string, bool) {
	if dir == "" || r.err != nil {
		return "", false
	}
	b, err := os.ReadFile(filepath.Join(dir, file))
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		r.err = err
		return "", false
	}
	return string(b), true
}

// single reads a file holding one unsigned number.
func (r *reader) single(dir, file string) Counter {
	s, ok := r.read(dir, file)
	if !ok {
		return Counter{}
	}
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		r.err = fmt.Errorf("%s: want a number, read %q", filepath.Join(dir, file), strings.TrimSpace(s))
		return Counter{}
	}
	return Counter{Value: v, OK: true}
}

// keyed is a flat keyed file: "key value" lines.
type keyed map[string]uint64

func (k keyed) get(key string) Counter {
	v, ok := k[key]
	return Counter{Value: v, OK: ok}
}

// keyed reads a flat keyed file; a line whose value is not a number (as
// pids.events never has, but a newer kernel might add) is skipped.
func (r *reader) keyed(dir, file string) keyed {
	s, ok := r.read(dir, file)
	if !ok {
		return nil
	}
	k := keyed{}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if v, err := strconv.ParseUint(f[1], 10, 64); err == nil {
			k[f[0]] = v
		}
	}
	return k
}
