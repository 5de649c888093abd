package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/benchrig/benchrig/internal/load"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// statusLine draws a live one-line status on w (a terminal) until stop is
// called: elapsed / planned, requests per second so far, failures.
func statusLine(w io.Writer, label string, e *load.Engine) (stop func()) {
	if !isTerminal(w) {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-t.C:
				p := e.Progress()
				if !p.Running {
					continue
				}
				total := "?"
				if p.Planned > 0 {
					total = p.Planned.Round(time.Second).String()
				}
				rps := 0.0
				if s := p.Elapsed.Seconds(); s > 0 {
					rps = float64(p.Requests) / s
				}
				fmt.Fprintf(w, "\r\033[K%s [%s / %s] %.0f req/s, %d requests, %d failed",
					label, p.Elapsed.Round(100*time.Millisecond), total, rps, p.Requests, p.Failures)
			}
		}
	}()
	return func() { close(done); <-finished }
}
