// Package status draws benchrig's live one-line status of a run on a
// terminal (phase, elapsed / planned, requests per second, failures) and
// the plain line of each finished sample printed anywhere else.
package status

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

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	// *os.File, or the secret-scrubbing writer around one.
	f, ok := w.(interface{ Fd() uintptr })
	return ok && f.Fd() != ^uintptr(0) && term.IsTerminal(int(f.Fd()))
}

// Line draws a live one-line status on a terminal: the phase, elapsed /
// planned, requests per second so far and failures. On anything else it
// draws nothing.
type Line struct {
	w       io.Writer
	live    bool // w is a terminal: the live line is drawn
	prefix  string
	mu      sync.Mutex
	phase   string
	planned time.Duration
	since   time.Time
	engine  load.Watched
	done    chan struct{}
	stopped chan struct{}
}

// New starts the status line on w, which draws it only when w is a
// terminal; Stop ends it.
func New(w io.Writer, prefix string) *Line {
	s := &Line{w: w, prefix: prefix, done: make(chan struct{}), stopped: make(chan struct{})}
	if !IsTerminal(w) {
		close(s.stopped)
		return s
	}
	s.live = true
	go s.loop()
	return s
}

// SetPhase names the phase now running and its planned length.
func (s *Line) SetPhase(phase string, planned time.Duration) {
	s.mu.Lock()
	s.phase, s.planned, s.since = phase, planned, time.Now()
	s.mu.Unlock()
}

// SetPrefix sets what the line starts with (the sample's position).
func (s *Line) SetPrefix(p string) {
	s.mu.Lock()
	s.prefix = p
	s.mu.Unlock()
}

// SetEngine is the load engine whose progress the line shows.
func (s *Line) SetEngine(e load.Watched) {
	s.mu.Lock()
	s.engine = e
	s.mu.Unlock()
}

// Stop clears the line and ends its drawing; it may be called again.
func (s *Line) Stop() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	<-s.stopped
}

func (s *Line) loop() {
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

func (s *Line) line() string {
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

// SampleDone reports a finished sample. On a terminal the live line shows
// progress already; anywhere else (a CI log, nohup) it prints one plain
// line per sample, so a long run is never silent. The runner calls it once
// per sample with its 1-based index, the number of samples of the run and
// the estimated time left.
func (s *Line) SampleDone(index, total int, smp *result.Sample, eta time.Duration) {
	if s.live {
		return
	}
	fmt.Fprintln(s.w, ProgressLine(index, total, smp, eta))
}

// ProgressLine is the plain line of a finished sample: position, case,
// variant, repeat, requests/s, p99, verdict and the ETA of the rest.
func ProgressLine(index, total int, smp *result.Sample, eta time.Duration) string {
	what := strings.TrimSpace(smp.Case + " · " + smp.Variant)
	if smp.Case == "" || smp.Variant == "" {
		what = smp.Key
	}
	parts := []string{fmt.Sprintf("[%d/%d] %s · repeat %d", index, total, what, smp.Repeat)}
	if st := smp.Search; st != nil { // a capacity search's step; total is its worst case
		parts = []string{fmt.Sprintf("[step %d, at most %d] %s · search %d %s", index, total, what, st.Search, st.Phase)}
	}
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
	switch {
	case smp.Search != nil:
	case index < total:
		parts = append(parts, "ETA "+eta.Round(time.Second).String())
	default:
		parts = append(parts, "done")
	}
	return strings.Join(parts, " · ")
}
