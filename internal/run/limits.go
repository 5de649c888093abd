package run

import (
	"fmt"
	"sync"
	"time"

	"github.com/benchrig/benchrig/internal/cgroup"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/target"
)

// throttledShare is the share of the load's CPU periods throttled above
// which a sample is warned that its CPU limit held it back.
const throttledShare = 0.01

// cgroupTrack reads a limited target's kernel counters at every phase edge
// (the sampler's edges) and once after the target stopped.
type cgroupTrack struct {
	lim            system.Limited
	every          time.Duration
	mu             sync.Mutex
	timeline       []result.CgroupPoint
	stop, done     chan struct{}
	first, prev    cgroup.Stats
	firstAt, prevT time.Time
	prevPhase      string
	started        bool
	phases         []result.CgroupFigures
}

// trackCgroup starts the track of a target run under limits (nil for one
// without).
func trackCgroup(t system.Target, every time.Duration) *cgroupTrack {
	lim, ok := t.(system.Limited)
	if !ok || lim.Limits() == nil {
		return nil
	}
	if every <= 0 {
		every = time.Second
	}
	return &cgroupTrack{lim: lim, every: every}
}

// point is a reading for the timeline.
func point(st cgroup.Stats, at time.Time) result.CgroupPoint {
	return result.CgroupPoint{Time: at.UTC(), CPUSeconds: float64(st.CPUUsageNS.Value) / 1e9, ThrottledSeconds: float64(st.ThrottledNS.Value) / 1e9,
		MemoryBytes: st.MemoryCurrent.Value, OOMKills: st.MemoryOOMKill.Value}
}

// read adds a reading to the timeline every interval until finish.
func (c *cgroupTrack) read() {
	defer close(c.done)
	t := time.NewTicker(c.every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case now := <-t.C:
			if st, err := c.lim.CgroupStats(); err == nil {
				c.mu.Lock()
				c.timeline = append(c.timeline, point(st, now))
				c.mu.Unlock()
			}
		}
	}
}

// mark closes the phase before and opens phase.
func (c *cgroupTrack) mark(phase string) {
	if c == nil {
		return
	}
	st, err := c.lim.CgroupStats()
	if err != nil {
		return
	}
	now := time.Now()
	c.mu.Lock()
	c.timeline = append(c.timeline, point(st, now))
	c.mu.Unlock()
	if !c.started {
		c.first, c.firstAt, c.started = st, now, true
		c.stop, c.done = make(chan struct{}), make(chan struct{})
		go c.read()
	} else {
		c.phases = append(c.phases, target.CgroupFigures(c.prevPhase, c.prev, st, now.Sub(c.prevT)))
	}
	c.prev, c.prevT, c.prevPhase = st, now, phase
}

// finish records the group in the sample once the target stopped: the
// last phase's and the whole run's counters, the limit that ended or held
// the target (UNHEALTHY with it, and the phase it happened in), and a
// warning when the CPU limit throttled the load.
func (c *cgroupTrack) finish(s *result.Sample, phaseAtEnd string) {
	if c == nil {
		return
	}
	if c.stop != nil {
		close(c.stop)
		<-c.done
	}
	rec := c.lim.CgroupRecord()
	if rec == nil {
		return
	}
	c.mu.Lock()
	rec.Timeline = c.timeline
	c.mu.Unlock()
	if st, err := c.lim.CgroupStats(); err == nil && c.started {
		now := time.Now()
		c.phases = append(c.phases, target.CgroupFigures(c.prevPhase, c.prev, st, now.Sub(c.prevT)))
		total := target.CgroupFigures("", c.first, st, now.Sub(c.firstAt))
		rec.Total = &total
	}
	rec.Phases = c.phases
	for _, f := range c.phases {
		if f.Phase == "load" && f.Periods > 0 && float64(f.Throttled) > throttledShare*float64(f.Periods) {
			rec.Warnings = append(rec.Warnings, fmt.Sprintf("the CPU limit (%g cores) throttled %.0f %% of the load's periods (%.2f s held back)",
				rec.Limits.CPUs, 100*float64(f.Throttled)/float64(f.Periods), f.ThrottledSeconds))
		}
	}
	if s.Server == nil {
		s.Server = &result.Server{}
	}
	s.Server.Cgroup = rec
	if err := c.lim.LimitError(); err != nil {
		if phaseAtEnd != "" {
			s.Verdict.Add("%v during %s", err, phaseAtEnd)
		} else {
			s.Verdict.Add("%v", err)
		}
	}
}
