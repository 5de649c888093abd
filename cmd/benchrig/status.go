package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	// *os.File, or the secret-scrubbing writer around one.
	f, ok := w.(interface{ Fd() uintptr })
	return ok && f.Fd() != ^uintptr(0) && term.IsTerminal(int(f.Fd()))
}

// status draws a live one-line status on a terminal: the phase, elapsed /
// planned, requests per second so far and failures. On anything else it
// draws nothing.
type status struct {
	w       io.Writer
	live    bool // w is a terminal: the live line is drawn
	prefix  string
	mu      sync.Mutex
	phase   string
	planned time.Duration
	since   time.Time
	engine  *load.Engine
	done    chan struct{}
	stopped chan struct{}
}

func newStatus(w io.Writer, prefix string) *status {
	s := &status{w: w, prefix: prefix, done: make(chan struct{}), stopped: make(chan struct{})}
	if !isTerminal(w) {
		close(s.stopped)
		return s
	}
	s.live = true
	go s.loop()
	return s
}

func (s *status) setPhase(phase string, planned time.Duration) {
	s.mu.Lock()
	s.phase, s.planned, s.since = phase, planned, time.Now()
	s.mu.Unlock()
}

func (s *status) setPrefix(p string) {
	s.mu.Lock()
	s.prefix = p
	s.mu.Unlock()
}

func (s *status) setEngine(e *load.Engine) {
	s.mu.Lock()
	s.engine = e
	s.mu.Unlock()
}

func (s *status) stop() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	<-s.stopped
}

func (s *status) loop() {
	defer close(s.stopped)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			fmt.Fprint(s.w, "\r\033[K")
			return
		case <-t.C:
			fmt.Fprint(s.w, "\r\033[K"+s.line())
		}
	}
}

func (s *status) line() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	el := time.Since(s.since).Round(100 * time.Millisecond)
	total := "?"
	if s.planned > 0 {
		total = s.planned.String()
	}
	line := fmt.Sprintf("%s%s [%s / %s]", s.prefix, s.phase, el, total)
	if s.engine != nil {
		if p := s.engine.Progress(); p.Running {
			rps := 0.0
			if sec := p.Elapsed.Seconds(); sec > 0 {
				rps = float64(p.Requests) / sec
			}
			line += fmt.Sprintf(" %.0f req/s, %d requests, %d failed", rps, p.Requests, p.Failures)
		}
	}
	return line
}

// sampleDone reports a finished sample. On a terminal the live line shows
// progress already; anywhere else (a CI log, nohup) it prints one plain
// line per sample, so a long run is never silent. The runner calls it once
// per sample with its 1-based index, the number of samples of the run and
// the estimated time left.
func (s *status) sampleDone(index, total int, smp *result.Sample, eta time.Duration) {
	if s.live {
		return
	}
	fmt.Fprintln(s.w, progressLine(index, total, smp, eta))
}

// progressLine is the plain line of a finished sample: position, case,
// variant, repeat, requests/s, p99, verdict and the ETA of the rest.
func progressLine(index, total int, smp *result.Sample, eta time.Duration) string {
	what := strings.TrimSpace(smp.Case + " · " + smp.Variant)
	if smp.Case == "" || smp.Variant == "" {
		what = smp.Key
	}
	parts := []string{fmt.Sprintf("[%d/%d] %s · repeat %d", index, total, what, smp.Repeat)}
	if smp.Load != nil && smp.Error == "" {
		parts = append(parts, fmt.Sprintf("%.0f req/s", smp.Load.RequestsPerSec))
		if smp.Load.Latency.Count > 0 {
			parts = append(parts, "p99 "+result.FormatUS(smp.Load.Latency.P(99)))
		}
	}
	switch {
	case smp.Error != "":
		parts = append(parts, "FAILED: "+smp.Error)
	case !smp.Verdict.Healthy:
		parts = append(parts, "UNHEALTHY: "+strings.Join(smp.Verdict.Reasons, "; "))
	default:
		parts = append(parts, "HEALTHY")
	}
	if index < total {
		parts = append(parts, "ETA "+eta.Round(time.Second).String())
	} else {
		parts = append(parts, "done")
	}
	return strings.Join(parts, " · ")
}
