// Package reportsrc is what the reading commands (report, compare,
// export, the end of run) share: a results file loaded once, verified, as
// a report source with its notice; the output format asked for or named
// by -o's extension; a report written whole to -o or to stdout; the
// report and compare commands themselves.
package reportsrc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/plan"
	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/verify"
)

// Load reads a results file for the report builders, once, through
// the one verification (checkResults): a suite's results (JSON Lines, from
// benchrig run and every quick mode) or the document of a quick run of an
// earlier benchrig (benchrig http|pg|resp -o). The source carries the
// file's verification notice, which every output shows first. Smoke
// results are refused unless allowed.
func Load(path string, allowSmoke bool) (*report.Source, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// a results file's first line is its header, whatever follows; a
	// quick run's document is one JSON object with a schema.
	if !bytes.HasPrefix(b, []byte(`{"type":"header"`)) {
		if src, ok, err := report.QuickDoc(path, b); ok {
			return src, err
		}
	}
	return suiteSource(verify.CheckOf(path, bytes.NewReader(b)), allowSmoke)
}

// suiteSource is the report source of a checked results file. A file with
// no header is refused with its notice: there is nothing to report.
func suiteSource(c *result.Checked, allowSmoke bool) (*report.Source, error) {
	path, hdr, samples, footer, rep := c.Path, c.Header, c.Samples, c.Footer, c.Report
	if hdr == nil {
		return nil, errors.New(strings.Join(rep.Notice(path, false), "\n"))
	}
	if hdr.Smoke && !allowSmoke {
		return nil, fmt.Errorf("%s holds smoke results: they prove the suite runs, they are not figures (--allow-smoke to report them anyway)", path)
	}
	src := &report.Source{Path: path, Kind: "suite", Title: hdr.Suite.Name, Tool: hdr.Tool, Host: hdr.Host, Targets: hdr.Targets, Floor: hdr.Floor,
		Notice: rep.Notice(path, true), Search: hdr.Search}
	src.Meta = append(src.Meta,
		report.KV{Key: "Suite", Value: fmt.Sprintf("%s (SHA-256 %s)", hdr.Suite.File, hdr.Suite.SHA256)},
		report.KV{Key: "Started", Value: hdr.Started.UTC().Format("2006-01-02 15:04:05 UTC")})
	if len(hdr.Suite.Overrides) > 0 {
		src.Meta = append(src.Meta, report.KV{Key: "Overrides", Value: strings.Join(hdr.Suite.Overrides, " ")})
	}
	// A report says whether its file verifies: checksum, plan, counts
	// ("Verified" here, or the notice above everything).
	if rep.OK() {
		ok := fmt.Sprintf("checksum, plan and sample consistency OK (%d of %d planned samples)", rep.Samples, rep.Planned)
		if hdr.Search != nil {
			ok = fmt.Sprintf("checksum, search steps (replayed from their verdicts) and sample consistency OK (%d steps)", rep.Samples)
		}
		src.Meta = append(src.Meta, report.KV{Key: "Verified", Value: ok})
		for _, w := range rep.Warnings {
			src.Notes = append(src.Notes, "benchrig verify: "+w)
		}
	}
	if footer != nil && !footer.Interrupted {
		src.Meta = append(src.Meta, report.KV{Key: "Finished", Value: footer.Finished.UTC().Format("2006-01-02 15:04:05 UTC") + " · file SHA-256 " + footer.SHA256})
	}
	if hdr.Smoke {
		src.Notes = append(src.Notes, "Smoke results: they prove the suite runs, they are not figures.")
	}
	// Labels come from the samples; files written before samples carried
	// them get them from the recorded suite.
	var cells map[string]suite.Cell
	for i := range samples {
		s := &samples[i]
		c, v := s.Case, s.Variant
		if c == "" || v == "" {
			if cells == nil {
				p, err := plan.Recorded(hdr.Suite.Resolved, hdr.Smoke)
				if err != nil {
					return nil, err
				}
				cells = map[string]suite.Cell{}
				for _, c := range p.Cells {
					cells[c.ID] = c
				}
			}
			cell, ok := cells[s.Cell]
			if !ok {
				return nil, fmt.Errorf("%s: sample %s: cell %q is not in the recorded suite's plan", path, s.Key, s.Cell)
			}
			c, v = cell.CaseLabel(), cell.VariantLabel()
		}
		src.Rows = append(src.Rows, report.Row{Case: c, Variant: v, Sample: s})
	}
	return src, nil
}

// WithNotice puts the verification notices of the sources before err: a
// command that gives up on a file that does not verify says that first,
// in the one notice format (an error it wraps keeps its exit code).
func WithNotice(err error, srcs ...*report.Source) error {
	seen := map[string]bool{}
	var lines []string
	for _, s := range srcs {
		if s != nil && !seen[s.Path] {
			seen[s.Path] = true
			lines = append(lines, s.Notice...)
		}
	}
	if err == nil || len(lines) == 0 {
		return err
	}
	return noticeError{notice: strings.Join(lines, "\n"), err: err}
}

// noticeError is an error after the verification notice of its files.
type noticeError struct {
	notice string
	err    error
}

func (e noticeError) Error() string { return e.notice + "\n" + e.err.Error() }
func (e noticeError) Unwrap() error { return e.err }

// OnlyVariant is src with the rows of one variant: the one labelled name,
// or the one whose label alone contains name.
func OnlyVariant(src *report.Source, name, flag string) (*report.Source, error) {
	var labels []string
	seen := map[string]bool{}
	for _, r := range src.Rows {
		if !seen[r.Variant] {
			seen[r.Variant] = true
			labels = append(labels, r.Variant)
		}
	}
	pick := ""
	if seen[name] {
		pick = name
	} else {
		for _, l := range labels {
			if strings.Contains(l, name) {
				if pick != "" {
					return nil, exitcode.Usagef("%s %q: names several variants of %s (%q, %q); give the whole label", flag, name, src.Path, pick, l)
				}
				pick = l
			}
		}
	}
	if pick == "" {
		return nil, exitcode.Usagef("%s %q: no such variant in %s; it has %s", flag, name, src.Path, strings.Join(QuoteAll(labels), ", "))
	}
	out := *src
	out.Title = src.Title + " · " + pick
	out.Rows = nil
	for _, r := range src.Rows {
		if r.Variant == pick {
			out.Rows = append(out.Rows, r)
		}
	}
	return &out, nil
}

// QuoteAll quotes each string as Go does ("a", "b").
func QuoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
