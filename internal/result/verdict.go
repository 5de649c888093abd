package result

import (
	"fmt"
	"time"
)

// Thresholds decide whether a run was healthy (DESIGN.md defaults).
type Thresholds struct {
	// Coverage is the least target coverage in percent (rate mode only).
	Coverage float64 `json:"coverage"`
	// P99 is the largest acceptable headline p99.
	P99        time.Duration `json:"p99"`
	Errors     int64         `json:"errors"`
	Timeouts   int64         `json:"timeouts"`
	Unexpected int64         `json:"unexpected"`
	Dropped    int64         `json:"dropped"`
	// MaxMiss is the largest tolerated miss ratio of the reads (0–1,
	// Load.MissRatio); nil tolerates any (the report still says how many
	// missed): the default where nobody filled the key space.
	MaxMiss *float64 `json:"max_miss,omitempty"`
}

// DefaultThresholds are DESIGN.md's: coverage ≥ 95 %, p99 ≤ 250 ms, no
// errors, timeouts, unexpected responses or dropped sends.
func DefaultThresholds() Thresholds {
	return Thresholds{Coverage: 95, P99: 250 * time.Millisecond}
}

// Verdict says whether a run was healthy and, if not, why.
type Verdict struct {
	Healthy bool     `json:"healthy"`
	Reasons []string `json:"reasons,omitempty"`
	// ClientBound is true when one reason is that the client could not
	// keep up: the result then measures benchrig, not the server.
	ClientBound bool `json:"client_bound,omitempty"`
}

// Add records one reason the run was unhealthy.
func (v *Verdict) Add(format string, args ...any) {
	v.Healthy = false
	v.Reasons = append(v.Reasons, fmt.Sprintf(format, args...))
}

// Judge applies thresholds to a load window. Server-side reasons (the target
// exited, a post-check failed) are added by the caller with Add.
func Judge(l *Load, th Thresholds) Verdict {
	v := Verdict{Healthy: true}
	if l.Interrupted {
		v.Add("interrupted after %.1f s", l.Seconds)
	}
	if l.Rate != nil && l.Rate.Coverage < th.Coverage {
		v.Add("coverage %.1f %% < %.1f %% (%d of %d scheduled requests completed in %.1f s)",
			l.Rate.Coverage, th.Coverage, l.Requests, l.Rate.Scheduled, l.Seconds)
	}
	if p99 := l.Latency.P(99); p99 >= 0 && time.Duration(p99)*time.Microsecond > th.P99 {
		what := "p99"
		if l.Service != nil {
			what = fmt.Sprintf("corrected p99 (service-time p99 %s, max %s)",
				FormatUS(l.Service.P(99)), FormatUS(l.Service.MaxUS))
		}
		v.Add("%s %s > %s: latency max %s", what, FormatUS(p99), th.P99, FormatUS(l.Latency.MaxUS))
	}
	if l.Rate != nil && l.Rate.Lag.MaxUS > 0 && time.Duration(l.Rate.Lag.P(99))*time.Microsecond > th.P99 {
		v.Add("schedule lag p99 %s, max %s: sends waited for a free connection (%d late)",
			FormatUS(l.Rate.Lag.P(99)), FormatUS(l.Rate.Lag.MaxUS), l.Rate.Late)
	}
	if l.Errors > th.Errors {
		v.Add("%d errors > %d", l.Errors, th.Errors)
	}
	if l.Timeouts > th.Timeouts {
		v.Add("%d timeouts > %d", l.Timeouts, th.Timeouts)
	}
	if l.Unexpected > th.Unexpected {
		v.Add("%d unexpected responses > %d", l.Unexpected, th.Unexpected)
	}
	if l.OutstandingAtEnd > 0 && time.Duration(l.OutstandingOldestUS)*time.Microsecond > th.P99 {
		v.Add("%d requests outstanding at the window's end, the oldest for %s > p99 %s: the server stopped answering them",
			l.OutstandingAtEnd, FormatUS(l.OutstandingOldestUS), th.P99)
	}
	if th.MaxMiss != nil && l.Misses > 0 && l.MissRatio() > *th.MaxMiss {
		v.Add("%d reads missed (%s of the reads answered) > max_miss %s: is the key space filled?",
			l.Misses, percent(l.MissRatio()), percent(*th.MaxMiss))
	}
	if l.Rate != nil && l.Rate.Dropped > th.Dropped {
		v.Add("%d sends dropped (backlog of %d full) > %d", l.Rate.Dropped, l.Rate.MaxBacklog, th.Dropped)
	}
	if l.Client.Saturated {
		v.ClientBound = true
		v.Add("client saturated: benchrig used %.2f of %d usable cores; the figures measure the client",
			l.Client.Cores, l.Client.UsableCores)
	}
	if v.Healthy {
		v.Reasons = nil
	}
	return v
}

// percent renders a ratio as a percentage with the precision it needs.
func percent(r float64) string {
	p := r * 100
	switch {
	case p == 0 || p >= 10:
		return fmt.Sprintf("%.0f %%", p)
	case p >= 0.1:
		return fmt.Sprintf("%.1f %%", p)
	}
	return fmt.Sprintf("%.3g %%", p)
}

// FormatUS renders microseconds with a unit suited to the magnitude.
func FormatUS(us int64) string {
	switch {
	case us < 0:
		return "n/a"
	case us < 1000:
		return fmt.Sprintf("%d µs", us)
	case us < 10_000:
		return fmt.Sprintf("%.2f ms", float64(us)/1000)
	case us < 1_000_000:
		return fmt.Sprintf("%.1f ms", float64(us)/1000)
	default:
		return fmt.Sprintf("%.2f s", float64(us)/1e6)
	}
}
