package load

import (
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
)

// The busy poll's share of the client's CPU is reported, and left out of
// the saturation check: a client that polls instead of sleeping is busy
// by choice, not short of cores.
func TestClientFiguresBusyPoll(t *testing.T) {
	defer driver.SetBusyPoll(20 * time.Microsecond)()
	a := rusage{user: time.Second, sys: time.Second, polled: 3 * time.Second}
	b := rusage{user: 2 * time.Second, sys: 2900 * time.Millisecond, polled: 4400 * time.Millisecond}

	c := clientFigures(a, b, 3, 100_000, 1, true)
	if c.BusyPollUS != 20 || c.BusyPollSeconds < 1.399 || c.BusyPollSeconds > 1.401 {
		t.Errorf("busy poll %g µs, %g s; want 20 µs, 1.4 s", c.BusyPollUS, c.BusyPollSeconds)
	}
	if c.Cores < 0.966 || c.Cores > 0.967 || c.Saturated {
		t.Errorf("cores %g, saturated %v; want 0.967 and not saturated (1.5 s of 2.9 s worked)", c.Cores, c.Saturated)
	}
	if c.RequestsPerCPUSecond < 34482 || c.RequestsPerCPUSecond > 34483 {
		t.Errorf("requests per CPU-second %g, want 100,000 ÷ 2.9 s (the polls are CPU spent)", c.RequestsPerCPUSecond)
	}

	c = clientFigures(a, b, 3, 100_000, 1, false)
	if c.BusyPollUS != 0 || c.BusyPollSeconds != 0 || !c.Saturated {
		t.Errorf("without the loops polling: busy poll %g µs, %g s, saturated %v; want 0, 0, true", c.BusyPollUS, c.BusyPollSeconds, c.Saturated)
	}

	// polled time is never more than the CPU time
	b.polled = 10 * time.Second
	if c := clientFigures(a, b, 3, 100_000, 1, true); c.BusyPollSeconds != c.UserSeconds+c.SystemSeconds {
		t.Errorf("busy poll %g s of %g s CPU", c.BusyPollSeconds, c.UserSeconds+c.SystemSeconds)
	}
}
