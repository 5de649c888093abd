package result

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
)

// Replanner re-expands the plan from a recorded, resolved suite, so Verify
// can check that the recorded plan is what the recorded inputs give.
type Replanner func(resolved json.RawMessage, smoke bool) ([]PlanEntry, error)

// Report is what Verify found.
type Report struct {
	// Problems lists every problem found; none means OK.
	Problems []string
	// Complete is true when the file has a footer and every planned sample.
	Complete bool
	// Incomplete (not corrupt): the file is a valid prefix of a run that
	// can be resumed.
	Incomplete bool
	Samples    int
	Planned    int
	// Warnings are true of a file that verifies but whose figures need a
	// caveat: samples measured after --resume-changed against changed
	// targets.
	Warnings []string
}

// OK reports whether the file verified.
func (r *Report) OK() bool { return len(r.Problems) == 0 && r.Complete }

func (r *Report) add(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// Verify checks a results file: schema version, the footer checksum, that
// the recorded plan matches the recorded suite re-expanded (when replan is
// given), completeness (every planned sample present, or failed with a
// reason), and internal consistency of every sample (counts add up,
// windows non-negative, percentiles monotonic, histograms match counts).
func Verify(path string, replan Replanner) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &Report{}
	hdr, samples, ft, rerr := ReadFile(path)
	var torn *TornLineError
	switch {
	case errors.As(rerr, &torn):
		r.add("incomplete: %v", rerr)
	case rerr != nil:
		r.add("%v", rerr)
	}
	if hdr == nil {
		r.add("no header line: not a benchrig results file")
		return r, nil
	}
	if hdr.Schema != ResultsSchema {
		r.add("schema %q, expected %q", hdr.Schema, ResultsSchema)
	}
	r.Samples, r.Planned = len(samples), len(hdr.Plan)

	// checksum: the footer covers every byte before its line.
	if ft != nil {
		body := data[:len(data)-1]
		i := bytes.LastIndexByte(body, '\n')
		sum := sha256.Sum256(data[:i+1])
		if got := hex.EncodeToString(sum[:]); got != ft.SHA256 {
			r.add("checksum mismatch: footer says %s, content hashes to %s (the file was changed after it was written)", short(ft.SHA256), short(got))
		}
		if ft.Samples != len(samples) {
			r.add("footer counts %d samples, the file holds %d", ft.Samples, len(samples))
		}
	}

	if replan != nil {
		plan, err := replan(hdr.Suite.Resolved, hdr.Smoke)
		if err != nil {
			r.add("the recorded suite no longer expands to a plan: %v", err)
		} else if !reflect.DeepEqual(plan, hdr.Plan) {
			r.add("the recorded plan (%d samples) differs from the plan the recorded suite expands to (%d samples)", len(hdr.Plan), len(plan))
		}
	}

	planned := map[string]bool{}
	for _, p := range hdr.Plan {
		planned[p.Key] = true
	}
	seen := map[string]bool{}
	for i, s := range samples {
		where := fmt.Sprintf("sample %d (%s)", i+1, s.Key)
		if !planned[s.Key] {
			r.add("%s: not in the plan", where)
		}
		if seen[s.Key] {
			r.add("%s: recorded twice", where)
		}
		seen[s.Key] = true
		if hdr.Smoke != s.Smoke {
			r.add("%s: smoke flag %v differs from the header's %v", where, s.Smoke, hdr.Smoke)
		}
		for _, p := range checkSample(&s) {
			r.add("%s: %s", where, p)
		}
	}
	if w := resumedChangedWarning(samples); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	missing := 0
	for _, p := range hdr.Plan {
		if !seen[p.Key] {
			missing++
		}
	}
	switch {
	case ft == nil:
		r.Incomplete = true
		r.add("incomplete: %d of %d planned samples recorded and no footer (the run stopped; --resume continues it)", len(samples), len(hdr.Plan))
	case missing > 0:
		r.Incomplete = true
		r.add("incomplete: %d of %d planned samples missing (run interrupted: %v)", missing, len(hdr.Plan), ft.Interrupted)
	default:
		r.Complete = true
	}
	return r, nil
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}

// checkSample returns the internal-consistency problems of one sample.
func checkSample(s *Sample) []string {
	var p []string
	if s.Error != "" {
		return nil // a failed sample carries its reason, not figures
	}
	if s.Finished.Before(s.Started) {
		p = append(p, "finished before it started")
	}
	l := s.Load
	if l == nil {
		return append(p, "no load figures and no error")
	}
	if l.Seconds < 0 || l.End.Before(l.Start) {
		p = append(p, fmt.Sprintf("negative load window (%.3f s)", l.Seconds))
	}
	if l.Requests < 0 || l.Errors < 0 || l.Timeouts < 0 || l.Unexpected < 0 {
		p = append(p, "negative counts")
	}
	if l.OutstandingAtEnd < 0 || l.OutstandingOldestUS < 0 || l.OutstandingAnswered < 0 || l.OutstandingAnswered > l.OutstandingAtEnd {
		p = append(p, fmt.Sprintf("outstanding counts: %d at the end, %d of them answered after it", l.OutstandingAtEnd, l.OutstandingAnswered))
	}
	if l.Misses < 0 {
		p = append(p, "negative misses")
	}
	if got := l.Requests + l.Errors + l.Timeouts + l.Unexpected + l.Misses + l.OutstandingAtEnd; got != l.Sent {
		p = append(p, fmt.Sprintf("counts do not add up: %d ok + %d errors + %d timeouts + %d unexpected + %d misses + %d outstanding at the end = %d, but %d sent",
			l.Requests, l.Errors, l.Timeouts, l.Unexpected, l.Misses, l.OutstandingAtEnd, got, l.Sent))
	}
	var msgs int64
	for _, n := range l.Messages {
		msgs += n
	}
	if msgs != l.Errors+l.Timeouts+l.Unexpected {
		p = append(p, fmt.Sprintf("errors by message sum to %d, counters to %d", msgs, l.Errors+l.Timeouts+l.Unexpected))
	}
	lats := map[string]*Latency{"latency": &l.Latency}
	if l.Service != nil {
		lats["service"] = l.Service
	}
	for name, lat := range lats {
		if lat.Count != l.Requests {
			p = append(p, fmt.Sprintf("%s count %d ≠ %d requests", name, lat.Count, l.Requests))
		}
		p = append(p, checkLatency(name, lat)...)
	}
	var tl int64
	for _, sec := range l.Timeline {
		tl += sec.Requests
		if sec.P50US > sec.P99US {
			p = append(p, fmt.Sprintf("timeline second %d: p50 %d > p99 %d", sec.T, sec.P50US, sec.P99US))
		}
	}
	if tl != l.Requests {
		p = append(p, fmt.Sprintf("timeline holds %d requests, the window %d", tl, l.Requests))
	}
	if l.Rate != nil && l.Sent+l.Rate.Dropped != l.Rate.Scheduled {
		p = append(p, fmt.Sprintf("rate: %d sent + %d dropped ≠ %d scheduled", l.Sent, l.Rate.Dropped, l.Rate.Scheduled))
	}
	if s.Server != nil {
		f := s.Server.Figures
		if f.CPUSeconds < 0 || f.WindowSeconds < 0 || math.IsNaN(f.Cores) {
			p = append(p, "server figures negative or not numbers")
		}
		for i := 1; i < len(s.Server.Samples); i++ {
			a, b := s.Server.Samples[i-1], s.Server.Samples[i]
			if b.Offset < a.Offset {
				p = append(p, fmt.Sprintf("server samples out of order at %d", i))
				break
			}
		}
	}
	return p
}

func checkLatency(name string, l *Latency) []string {
	var p []string
	prev := int64(-1)
	for _, q := range l.Percentiles {
		if q.US < prev {
			p = append(p, fmt.Sprintf("%s percentiles not monotonic at %v %%", name, q.Q))
			break
		}
		prev = q.US
	}
	if l.Count > 0 && (l.MinUS > l.MaxUS || prev > l.MaxUS) {
		p = append(p, fmt.Sprintf("%s min/max inconsistent", name))
	}
	if l.Histogram != "" {
		h, err := l.Decode()
		if err != nil {
			p = append(p, fmt.Sprintf("%s histogram: %v", name, err))
		} else if h.TotalCount() != l.Count {
			p = append(p, fmt.Sprintf("%s histogram holds %d values, summary says %d", name, h.TotalCount(), l.Count))
		}
	}
	return p
}

// resumedChangedWarning says which samples were measured after a resume
// against changed targets (--resume-changed), and what had changed.
func resumedChangedWarning(samples []Sample) string {
	var keys, changes []string
	seen := map[string]bool{}
	for _, s := range samples {
		if len(s.ResumedChanged) == 0 {
			continue
		}
		keys = append(keys, s.Key)
		for _, c := range s.ResumedChanged {
			if !seen[c] {
				seen[c] = true
				changes = append(changes, c)
			}
		}
	}
	if len(keys) == 0 {
		return ""
	}
	shown := keys
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("… %d more", len(keys)-5))
	}
	return fmt.Sprintf("%d of %d samples were measured after --resume-changed against changed targets (%s): %s; compare them with the earlier samples with care",
		len(keys), len(samples), strings.Join(changes, "; "), strings.Join(shown, ", "))
}
