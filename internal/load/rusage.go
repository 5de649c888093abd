package load

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/result"
)

// rusage is the process's CPU time so far, and the part of it the event
// loops spent busy-polling (driver.BusyPolled).
type rusage struct {
	user, sys, polled time.Duration
	rings             int64 // driver.RingRuns
}

func readRusage() rusage {
	u, s := proc.SelfCPU()
	return rusage{user: u, sys: s, polled: driver.BusyPolled(), rings: driver.RingRuns()}
}

// UsableCores is how many cores the client may use: its CPU affinity, capped
// by GOMAXPROCS.
func UsableCores() int {
	n := runtime.GOMAXPROCS(0)
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil {
		if c := set.Count(); c > 0 && c < n {
			n = c
		}
	}
	return n
}

// clientFigures derives the client's CPU figures over a window (DESIGN.md:
// client cores = user+system ÷ window seconds; saturated above 90 % of the
// usable cores). usable is what the window's goroutines could use at most:
// the client's cores, but no more than its event loops or workers.
func clientFigures(a, b rusage, seconds float64, completed int64, usable int, polled bool) result.Client {
	c := result.Client{
		UserSeconds:   (b.user - a.user).Seconds(),
		SystemSeconds: (b.sys - a.sys).Seconds(),
		UsableCores:   usable,
	}
	cpu := c.UserSeconds + c.SystemSeconds
	if polled {
		c.BusyPollUS = float64(driver.BusyPoll()) / float64(time.Microsecond)
		c.BusyPollSeconds = min(max((b.polled-a.polled).Seconds(), 0), cpu)
	}
	if seconds > 0 {
		c.Cores = cpu / seconds
		// a client that polls instead of sleeping is busy, not
		// saturated: what it would have spent asleep is left out
		c.Saturated = (cpu-c.BusyPollSeconds)/seconds > 0.9*float64(c.UsableCores)
	}
	if cpu > 0 {
		c.RequestsPerCPUSecond = float64(completed) / cpu
	}
	if completed > 0 {
		c.CPUPerRequestUS = cpu * 1e6 / float64(completed)
	}
	return c
}
