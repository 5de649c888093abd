package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/result"
)

// The terminal names where client and server ran: the server's CPUs as
// benchrig pinned them, or as found (a server someone else pinned).
func TestTerminalPlacement(t *testing.T) {
	for _, c := range []struct {
		pl   *result.Placement
		want string
	}{
		{&result.Placement{ClientCPUs: "1", TargetCPUs: "0"}, "Placement: client on CPUs 1, server on CPUs 0.\n"},
		{&result.Placement{ClientCPUs: "1", ServerCPUs: "0", ClientChosen: true}, "Placement: client on CPUs 1, server on CPUs 0 (found pinned).\n"},
		{&result.Placement{ClientCPUs: "2-3"}, "Placement: client on CPUs 2-3, server on CPUs (all).\n"},
		{&result.Placement{}, ""},
	} {
		var b bytes.Buffer
		serverTable(&printer{w: &b}, &result.Server{Placement: c.pl}, &result.Load{})
		got := ""
		for _, line := range strings.SplitAfter(b.String(), "\n") {
			if strings.HasPrefix(line, "Placement:") {
				got = line
			}
		}
		if got != c.want {
			t.Errorf("placement %+v: %q, want %q", *c.pl, got, c.want)
		}
	}
}

// The terminal's rate figures name the timer slack when there was one,
// and say nothing of it when there was none (or no config was recorded).
func TestTerminalTimerSlack(t *testing.T) {
	lag := result.Latency{Count: 10, MaxUS: 900, Percentiles: []result.Percentile{{Q: 50, US: 400}, {Q: 99, US: 800}}}
	for _, c := range []struct {
		cfg  *result.Config
		want string
	}{
		{nil, "Schedule lag p50 400 µs, p99 800 µs, max 900 µs\n"},
		{&result.Config{Engine: result.EngineConfig{Rate: 100}}, "Schedule lag p50 400 µs, p99 800 µs, max 900 µs\n"},
		{&result.Config{Engine: result.EngineConfig{Rate: 100, TimerSlackUS: 1000}},
			"Schedule lag p50 400 µs, p99 800 µs, max 900 µs (timer slack 1.00 ms: sends wait up to that long to leave together)\n"},
	} {
		var b bytes.Buffer
		s := &result.Sample{Config: c.cfg, Load: &result.Load{Rate: &result.RateStats{Target: 100, Scheduled: 10, Lag: lag}}}
		rateFigures(&printer{w: &b}, s.Load, timerSlack(s))
		got := ""
		for _, line := range strings.SplitAfter(b.String(), "\n") {
			if strings.HasPrefix(line, "Schedule lag") {
				got = line
			}
		}
		if got != c.want {
			t.Errorf("config %+v: %q, want %q", c.cfg, got, c.want)
		}
	}
}
