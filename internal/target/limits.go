package target

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/cgroup"
	"github.com/benchrig/benchrig/internal/result"
)

// Targets under limits. A Spec with Limits runs each start of the target in
// a control group of its own (see package cgroup), made under benchrig's
// own group before the fork and named after the target and a counter. The
// watchdog, which stays outside the group, starts the target through the
// cgroup exec shim (benchrig re-executed with cgroup.ShimArgsPath): the
// shim moves itself into the group and execs the target, so every process
// of the tree is in the group from its first instruction. When the tree is
// killed (Stop, a failed start, benchrig's death, kill -9 included) the
// watchdog reads the group's last counters, sends them to benchrig and
// removes the group; benchrig removes it too after the watchdog has gone,
// should the watchdog have failed to. Groups left by a benchrig and its
// watchdog both killed are removed by RemoveStaleGroups, which the first
// start under limits of each benchrig runs.

// ErrNoLimits is returned by Process.CgroupStats for a target started
// without limits.
var ErrNoLimits = errors.New("the target runs without limits: no cgroup to read")

// LimitError says that the target hit one of its limits: the memory limit
// (the kernel's OOM killer killed a process of the group) or the pids limit
// (forks were refused). Its text is the reason a sample fails with.
type LimitError struct {
	// Limit is "memory" or "pids".
	Limit string
	// Text is the whole reason: "killed by the memory limit (512 MiB) at
	// 511.8 MiB", "held at the pids limit (32): fork failed 17 times".
	Text string
}

func (e *LimitError) Error() string { return e.Text }

// hierarchy is benchrig's cgroup hierarchy, detected once per process.
var hierarchy struct {
	once  sync.Once
	h     *cgroup.Hierarchy
	err   error
	stale []string // warnings from the first RemoveStale
}

// groupSeq numbers the groups a benchrig makes.
var groupSeq atomic.Uint64

// detectHierarchy detects the hierarchy once, and removes the groups dead
// benchrigs left on it.
func detectHierarchy() (*cgroup.Hierarchy, []string, error) {
	hierarchy.once.Do(func() {
		hierarchy.h, hierarchy.err = cgroup.Detect()
		if hierarchy.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		names, err := cgroup.RemoveStale(ctx, hierarchy.h)
		if err != nil {
			hierarchy.stale = append(hierarchy.stale, fmt.Sprintf("groups left by dead benchrigs could not all be removed (%v)", err))
		}
		_ = names
	})
	return hierarchy.h, hierarchy.stale, hierarchy.err
}

// RemoveStaleGroups removes the cgroups that benchrigs killed before they
// could clean up left behind, with whatever still runs in them (see
// cgroup.RemoveStale), and returns their names. Groups of running
// benchrigs are left alone. The first start of a target under limits calls
// it too; a run may call it first thing. It fails when no hierarchy is
// usable.
func RemoveStaleGroups(ctx context.Context) ([]string, error) {
	h, _, err := detectHierarchy()
	if err != nil {
		return nil, err
	}
	return cgroup.RemoveStale(ctx, h)
}

// groupName is the name of a target's next group: its name in a–z, 0–9
// and -, and a counter.
func groupName(target string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(target) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() >= 32 {
			break
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		name = "target"
	}
	return name + "-" + strconv.FormatUint(groupSeq.Add(1), 10)
}

// limitWarnings are the limits of l that do nothing on this machine for a
// target pinned to cpus (nil: not pinned): a CPU limit of at least the CPUs
// it may run on, a swap limit without swap. It also returns the limits to
// apply: without swap, Swap is dropped (it would limit nothing, and the
// kernel may not account swap).
func limitWarnings(l cgroup.Limits, cpus []int) (cgroup.Limits, []string) {
	var warns []string
	if l.CPUs > 0 {
		n, where := len(cpus), "the target is pinned to"
		if n == 0 {
			var set unix.CPUSet
			if unix.SchedGetaffinity(0, &set) == nil {
				n, where = set.Count(), "benchrig and so the target may run on"
			}
		}
		if n > 0 && l.CPUs >= float64(n) {
			warns = append(warns, fmt.Sprintf("cpus %g limits nothing: %s %d CPU%s", l.CPUs, where, n, plural(n)))
		}
	}
	if l.Swap != nil {
		if total, ok := swapTotal("/proc/meminfo"); ok && total == 0 {
			warns = append(warns, fmt.Sprintf("swap %s limits nothing: this machine has no swap (SwapTotal 0 in /proc/meminfo)", cgroup.FormatMemory(*l.Swap)))
			l.Swap = nil
		}
	}
	return l, warns
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// swapTotal reads SwapTotal from a meminfo file, in kB.
func swapTotal(file string) (uint64, bool) {
	f, err := os.Open(file)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "SwapTotal:"); ok {
			v, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return v, err == nil
		}
	}
	return 0, false
}

// limited is the cgroup side of a Process started with limits.
type limited struct {
	limits   cgroup.Limits // as the spec gave them
	group    *cgroup.Group
	warnings []string

	mu    sync.Mutex
	final *cgroup.Stats // the watchdog's last reading, once it sent one
	gone  bool          // the group has been removed
}

// newLimited makes the group of one start of the target.
func newLimited(name string, l cgroup.Limits, cpus []int) (*limited, error) {
	h, stale, err := detectHierarchy()
	if err != nil {
		return nil, err
	}
	apply, warns := limitWarnings(l, cpus)
	g, err := h.Create(groupName(name), apply)
	if err != nil {
		return nil, err
	}
	warns = append(warns, g.Warnings()...)
	warns = append(warns, stale...)
	return &limited{limits: l, group: g, warnings: warns}, nil
}

// stats reads the group's counters, or returns the watchdog's last reading
// once the group is gone.
func (c *limited) stats() (cgroup.Stats, error) {
	c.mu.Lock()
	gone, final := c.gone, c.final
	c.mu.Unlock()
	if !gone {
		st, err := c.group.Stats()
		if err == nil {
			return st, nil
		}
		c.mu.Lock()
		final = c.final
		c.mu.Unlock()
		if final == nil {
			return cgroup.Stats{}, err
		}
	}
	if final == nil {
		return cgroup.Stats{}, fmt.Errorf("cgroup %s was removed before its counters were read", c.group.Name())
	}
	return *final, nil
}

// setFinal keeps the watchdog's last reading of the counters.
func (c *limited) setFinal(st cgroup.Stats) {
	c.mu.Lock()
	c.final = &st
	c.mu.Unlock()
}

// remove removes the group (a removed group is left as it is).
func (c *limited) remove(ctx context.Context) error {
	err := c.group.Remove(ctx)
	if err == nil {
		c.mu.Lock()
		c.gone = true
		c.mu.Unlock()
	}
	return err
}

// limitError words what the counters say of the limits: a process killed
// by the memory limit, or forks refused at the pids limit; nil when
// neither. killed says the target's leader ended by SIGKILL that benchrig
// did not send, which with a memory limit hit (failcnt) counts as an OOM
// kill on kernels without an oom_kill counter.
func limitError(l cgroup.Limits, st cgroup.Stats, killed bool) *LimitError {
	oom := st.MemoryOOMKill.OK && st.MemoryOOMKill.Value > 0
	if !st.MemoryOOMKill.OK && killed && l.Memory > 0 {
		oom = st.MemoryFailcnt.Value > 0 || st.UnderOOM.Value > 0 || st.MemoryMax.Value > 0
	}
	if oom {
		text := fmt.Sprintf("killed by the memory limit (%s)", spaced(cgroup.FormatMemory(l.Memory)))
		if st.MemoryPeak.OK {
			text += " at " + mib(st.MemoryPeak.Value)
		}
		return &LimitError{Limit: "memory", Text: text}
	}
	if st.PidsMax.OK && st.PidsMax.Value > 0 {
		limit := "the pids limit of an enclosing group"
		if l.Pids > 0 {
			limit = fmt.Sprintf("the pids limit (%d)", l.Pids)
		}
		return &LimitError{Limit: "pids", Text: fmt.Sprintf("held at %s: fork failed %d time%s",
			limit, st.PidsMax.Value, plural(int(min(st.PidsMax.Value, 2))))}
	}
	return nil
}

// spaced writes "512MiB" as "512 MiB".
func spaced(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if i <= 0 {
		return s
	}
	return s[:i] + " " + s[i:]
}

// mib writes bytes in MiB, with one decimal when not whole.
func mib(b uint64) string {
	s := strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + " MiB"
}

// Limits returns the limits the target runs under (a copy of
// Spec.Limits), or nil when it runs without.
func (p *Process) Limits() *cgroup.Limits {
	if p.lim == nil {
		return nil
	}
	l := p.lim.limits
	if l.Swap != nil {
		l.Swap = new(*l.Swap)
	}
	return &l
}

// LimitWarnings returns the limits that do nothing for this start, one
// sentence each: a CPU limit of at least the CPUs the target may run on, a
// swap limit on a machine without swap or without swap accounting; and
// groups of dead benchrigs that could not be removed. Nothing is printed:
// the caller records or shows them.
func (p *Process) LimitWarnings() []string {
	if p.lim == nil {
		return nil
	}
	return slices.Clone(p.lim.warnings)
}

// CgroupName returns the name of the target's cgroup and its version, or
// "" and 0 without limits.
func (p *Process) CgroupName() (string, cgroup.Version) {
	if p.lim == nil {
		return "", 0
	}
	return p.lim.group.Name(), p.lim.group.Version()
}

// CgroupStats reads the kernel's counters of the target's cgroup now: call
// it at each phase boundary and take the differences (CgroupFigures). Once
// the tree has been killed and the group removed (after Stop), it returns
// the last counters the watchdog read before removing it. Without limits
// it returns ErrNoLimits.
func (p *Process) CgroupStats() (cgroup.Stats, error) {
	if p.lim == nil {
		return cgroup.Stats{}, ErrNoLimits
	}
	return p.lim.stats()
}

// LimitError says whether the target hit its memory or pids limit: a
// *LimitError when a process of the group was killed by the memory limit
// (its oom_kill counter grew; on kernels without that counter, the leader
// was killed by SIGKILL that benchrig did not send while the limit was
// hit), or when forks were refused at the pids limit; nil otherwise, and
// without limits. After the target's end, it is why it ended, and the
// sample should fail with it; while it runs, it means a process of its
// tree was killed or a fork refused. It reads the counters (CgroupStats).
func (p *Process) LimitError() error {
	if p.lim == nil {
		return nil
	}
	st, err := p.lim.stats()
	if err != nil {
		return nil
	}
	killed := false
	select {
	case <-p.exited:
		killed = p.killedAlone
	default:
	}
	if e := limitError(p.lim.limits, st, killed); e != nil {
		return e
	}
	return nil
}

// CgroupRecord returns the result record of the target's cgroup for its
// sample, without figures: the limits, the group, the warnings and, once
// the target hit a limit, the End. The caller adds Phases and Total
// (CgroupFigures). Nil without limits.
func (p *Process) CgroupRecord() *result.Cgroup {
	if p.lim == nil {
		return nil
	}
	l := p.lim.limits
	rec := &result.Cgroup{
		Limits:   result.CgroupLimits{CPUs: l.CPUs, MemoryBytes: l.Memory, Pids: l.Pids},
		Version:  int(p.lim.group.Version()),
		Group:    p.lim.group.Name(),
		Warnings: p.LimitWarnings(),
	}
	if l.Swap != nil {
		rec.Limits.SwapBytes = new(*l.Swap)
	}
	if err := p.LimitError(); err != nil {
		rec.End = err.Error()
	}
	return rec
}

// CgroupFigures are the counters of a group between two readings of
// CgroupStats taken wall apart, as the result records them for phase ("":
// the whole sample): growth of CPU and throttling, peaks and event counts
// at the second reading (the kernel keeps them from the group's start). A
// counter unavailable in either reading is listed in Missing.
func CgroupFigures(phase string, from, to cgroup.Stats, wall time.Duration) result.CgroupFigures {
	f := result.CgroupFigures{Phase: phase, WindowSeconds: wall.Seconds()}
	grow := func(name string, a, b cgroup.Counter) uint64 {
		if !a.OK || !b.OK {
			f.Missing = append(f.Missing, name)
			return 0
		}
		return b.Value - min(a.Value, b.Value)
	}
	at := func(name string, b cgroup.Counter) uint64 {
		if !b.OK {
			f.Missing = append(f.Missing, name)
		}
		return b.Value
	}
	f.CPUSeconds = float64(grow("cpu_s", from.CPUUsageNS, to.CPUUsageNS)) / 1e9
	if f.WindowSeconds > 0 {
		f.Cores = f.CPUSeconds / f.WindowSeconds
	} else {
		f.Missing = append(f.Missing, "cores")
	}
	f.Periods = grow("nr_periods", from.NrPeriods, to.NrPeriods)
	f.Throttled = grow("nr_throttled", from.NrThrottled, to.NrThrottled)
	f.ThrottledSeconds = float64(grow("throttled_s", from.ThrottledNS, to.ThrottledNS)) / 1e9
	f.MemoryPeakBytes = at("memory_peak_bytes", to.MemoryPeak)
	f.OOMKills = at("oom_kills", to.MemoryOOMKill)
	f.PidsPeak = at("pids_peak", to.PidsPeak)
	f.PidsMaxEvents = at("pids_max_events", to.PidsMax)
	slices.Sort(f.Missing)
	return f
}
