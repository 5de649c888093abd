package result

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strings"
	"time"
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

// Verdict is "ok" for a file that verified, "incomplete" for a valid
// prefix of a run (not corrupt: --resume continues it), else "failed".
func (r *Report) Verdict() string {
	switch {
	case r.OK():
		return "ok"
	case r.Incomplete && onlyIncomplete(r.Problems):
		return "incomplete"
	}
	return "failed"
}

// onlyIncomplete reports whether every problem says the file is
// incomplete (and none that it is damaged).
func onlyIncomplete(problems []string) bool {
	for _, p := range problems {
		if !strings.HasPrefix(p, "incomplete:") {
			return false
		}
	}
	return true
}

// Notice is the one notice every reading command puts first in its
// output (verify, the terminal, Markdown, HTML, CSV and JSON reports,
// compare, export) when the file at path does not verify: a headline with
// the verdict and the file, then one line per problem ("  - …") and per
// warning ("  ! …"). figures says what the verdict means for the figures
// that follow. It is nil for a file that verifies.
func (r *Report) Notice(path string, figures bool) []string {
	var head string
	switch r.Verdict() {
	case "ok":
		return nil
	case "incomplete":
		head = "INCOMPLETE (not corrupt): " + path
		if figures {
			head += fmt.Sprintf(": the figures below are of the %d of %d planned samples it holds", r.Samples, r.Planned)
		}
	default:
		head = "FAILED verification: " + path
		if figures {
			head += ": the figures below may not be what was measured"
		}
	}
	out := []string{head}
	for _, p := range r.Problems {
		out = append(out, "  - "+p)
	}
	for _, w := range r.Warnings {
		out = append(out, "  ! "+w)
	}
	return out
}

func (r *Report) add(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// Checked is a results file read once and verified: what every reading
// command (verify, report, compare, export, checksum) shows, and the one
// place its verdict comes from.
type Checked struct {
	// Path names the file in every message.
	Path    string
	Header  *Header
	Samples []Sample
	// Footer is nil when the file has none (the run stopped).
	Footer *Footer
	// Torn is the last line cut before its newline, if any.
	Torn *TornLineError
	// Report is the verification.
	Report *Report

	lines            int
	footerLine       int
	before           string // hex SHA-256 of every byte before the footer
	lineProblems     []string
	moreLineProblems int
}

// Check reads the results file at path once, every line (a damaged line
// is a problem, not the end of the reading), and verifies it as Verify
// says. Only a file that cannot be opened is an error.
func Check(path string, replan Replanner) (*Checked, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return CheckReader(path, f, replan), nil
}

// CheckReader is Check of the bytes r yields, named path in messages: it
// reads nothing else (the fuzz target's harness).
func CheckReader(path string, r io.Reader, replan Replanner) *Checked {
	c := &Checked{Path: path}
	_ = c.read(r, false)
	c.Report = c.verify(replan)
	return c
}

// Verify checks a results file: schema version, the footer checksum, that
// the recorded plan matches the recorded suite re-expanded (when replan is
// given), completeness (every planned sample present, or failed with a
// reason), and internal consistency of every sample (counts add up,
// windows non-negative and consistent with their phases and timelines,
// percentiles monotonic, histograms match counts).
func Verify(path string, replan Replanner) (*Report, error) {
	c, err := Check(path, replan)
	if err != nil {
		return nil, err
	}
	return c.Report, nil
}

// verify is the verification of what read found.
func (c *Checked) verify(replan Replanner) *Report {
	r := &Report{}
	for _, p := range c.lineProblems {
		r.add("%s", p)
	}
	if c.moreLineProblems > 0 {
		r.add("%d more lines that do not parse", c.moreLineProblems)
	}
	if c.Torn != nil {
		r.add("incomplete: %v", c.Torn)
	}
	hdr, samples, ft := c.Header, c.Samples, c.Footer
	if hdr == nil {
		if c.lines == 0 && c.Torn == nil {
			r.add("empty file: no header line (a run that stopped before writing its header holds no sample): not a benchrig results file")
		} else {
			r.add("no header line: not a benchrig results file")
		}
		return r
	}
	if hdr.Schema != ResultsSchema {
		r.add("schema %q, expected %q", hdr.Schema, ResultsSchema)
	}
	r.Samples, r.Planned = len(samples), len(hdr.Plan)

	// checksum: the footer covers every byte before its line.
	if ft != nil {
		if c.before != ft.SHA256 {
			r.add("checksum mismatch: footer says %s, content hashes to %s (the file was changed after it was written)", short(ft.SHA256), short(c.before))
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
	searched := map[string]bool{}
	if hdr.Search != nil {
		for _, c := range hdr.Search.Cells {
			searched[c] = true
		}
	}
	seen := map[string]bool{}
	for i, s := range samples {
		where := fmt.Sprintf("sample %d (%s)", i+1, s.Key)
		switch {
		case s.Search != nil && (!searched[s.Cell] || s.Key != SearchKey(s.Cell, *s.Search)):
			r.add("%s: a search step of no searched cell, or under another key (want %s)", where, SearchKey(s.Cell, *s.Search))
		case s.Search == nil && !planned[s.Key]:
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
	if hdr.Search != nil {
		for _, p := range replaySearches(hdr.Search, samples) {
			r.add("%s", p)
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
	return r
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
	if w := s.Warmup; w != nil && (w.Seconds < 0 || w.Requests < 0 || w.Failures < 0 || w.Unanswered < 0) {
		p = append(p, fmt.Sprintf("negative warm-up figures: %.3f s, %d requests, %d failures, %d unanswered", w.Seconds, w.Requests, w.Failures, w.Unanswered))
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
	p = append(p, checkWindow(s)...)
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

// Tolerances of checkWindow: clocks (the wall clock of the phases, the
// monotonic one of the window) and the agents' start barrier and part
// collection, which the load phase holds around the window.
const (
	windowSlack = 50 * time.Millisecond
	phaseSlack  = 2 * time.Second
)

// checkWindow checks a sample's load window against itself and what was
// recorded around it: its seconds are its end minus its start; it lies in
// its load phase, which lasted about as long; its per-second timeline ends
// within it; requests/s and the client's cores are the counts divided by
// it. A file whose window was edited and re-signed (load.seconds halved)
// fails here, whatever its checksum says.
func checkWindow(s *Sample) []string {
	var p []string
	l := s.Load
	secs := time.Duration(l.Seconds * float64(time.Second))
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Max(math.Abs(a), math.Abs(b))) }
	if !l.Start.IsZero() && !l.End.IsZero() {
		if d := l.End.Sub(l.Start); (d - secs).Abs() > time.Millisecond+d/1000 {
			p = append(p, fmt.Sprintf("load window of %.3f s, but it starts at %s and ends %.3f s later", l.Seconds, l.Start.Format(time.RFC3339Nano), d.Seconds()))
		}
		for _, ph := range s.Phases {
			if ph.Name != "load" {
				continue
			}
			slack := windowSlack + ph.End.Sub(ph.Start)/100
			switch span := ph.End.Sub(ph.Start); {
			case l.Start.Before(ph.Start.Add(-slack)) || l.End.After(ph.End.Add(slack)):
				p = append(p, fmt.Sprintf("load window %s–%s lies outside its load phase %s–%s", clock(l.Start), clock(l.End), clock(ph.Start), clock(ph.End)))
			case secs > span+slack:
				p = append(p, fmt.Sprintf("load window of %.3f s in a load phase of %.3f s", l.Seconds, span.Seconds()))
			case span > secs+phaseSlack+secs/10:
				p = append(p, fmt.Sprintf("load window of %.3f s in a load phase of %.3f s: the window is the phase, less the agents' start and the collection of their parts", l.Seconds, span.Seconds()))
			}
		}
	}
	if n := len(l.Timeline); n > 0 && float64(l.Timeline[n-1].T) > l.Seconds+1 {
		p = append(p, fmt.Sprintf("the timeline runs to second %d of a %.3f s window", l.Timeline[n-1].T, l.Seconds))
	}
	if l.Seconds > 0 {
		if want := float64(l.Requests) / l.Seconds; !near(l.RequestsPerSec, want) {
			p = append(p, fmt.Sprintf("requests_per_sec %.3f, but %d requests in %.3f s are %.3f", l.RequestsPerSec, l.Requests, l.Seconds, want))
		}
		cpu := l.Client.UserSeconds + l.Client.SystemSeconds
		if want := cpu / l.Seconds; l.Client.Cores != 0 && !near(l.Client.Cores, want) {
			p = append(p, fmt.Sprintf("client cores %.3f, but %.3f CPU-seconds in %.3f s are %.3f", l.Client.Cores, cpu, l.Seconds, want))
		}
	}
	return p
}

// clock is t's time of day, to the millisecond.
func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }

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
