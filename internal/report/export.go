package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/benchrig/benchrig/internal/result"
)

// exportFigure is one figure of the tidy exports: its column name, unit
// and how to read it from a sample.
type exportFigure struct {
	name, unit string
	get        func(*result.Sample) (float64, bool)
}

// loadCount reads a count of the load window.
func loadCount(f func(*result.Load) int64) func(*result.Sample) (float64, bool) {
	return func(s *result.Sample) (float64, bool) {
		if s.Load == nil {
			return 0, false
		}
		return float64(f(s.Load)), true
	}
}

// exportFigures are the figures of the CSV and JSON exports, in order.
var exportFigures = []exportFigure{
	{"requests_per_sec", "req/s", mReqPerSec.get},
	{"requests", "count", loadCount(func(l *result.Load) int64 { return l.Requests })},
	{"errors", "count", loadCount(func(l *result.Load) int64 { return l.Errors })},
	{"timeouts", "count", loadCount(func(l *result.Load) int64 { return l.Timeouts })},
	{"unexpected", "count", loadCount(func(l *result.Load) int64 { return l.Unexpected })},
	{"reconnects", "count", loadCount(func(l *result.Load) int64 { return l.Reconnects })},
	{"p50", "ms", mP50.get},
	{"p90", "ms", mP90.get},
	{"p99", "ms", mP99.get},
	{"p99.9", "ms", mP999.get},
	{"max", "ms", mMax.get},
	{"service_p99", "ms", serviceP99.get},
	{"coverage", "%", mCoverage.get},
	{"server_cores", "cores", mServerCores.get},
	{"server_us_per_request", "µs", mServerUS.get},
	{"server_peak", "MiB", mPeakMiB.get},
	{"rss_baseline", "MiB", rssMetric("", func(f result.ServerFigures) uint64 { return f.RSSBaseline }).get},
	{"rss_load", "MiB", rssMetric("", func(f result.ServerFigures) uint64 { return f.RSSLoad }).get},
	{"rss_after", "MiB", rssMetric("", func(f result.ServerFigures) uint64 { return f.RSSAfter }).get},
	{"client_cores", "cores", mClientCores.get},
	{"client_us_per_request", "µs", mClientUS.get},
	{"healthy", "bool", func(s *result.Sample) (float64, bool) {
		if s.Error == "" && s.Verdict.Healthy {
			return 1, true
		}
		return 0, true
	}},
}

// CSV writes the tidy table of a results file: one row per sample and
// figure (sample, key, case, variant, repeat, figure, unit, value), the
// samples in the order they ran, figures the sample does not have left
// out. Values are written in full precision. A file that does not verify
// has its notice first, as "#" comment lines.
func CSV(w io.Writer, src *Source) error {
	// the verification notice first, as "#" comment lines
	for _, l := range src.Notice {
		if _, err := fmt.Fprintf(w, "# %s\n", l); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
	}
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"sample", "key", "case", "variant", "repeat", "figure", "unit", "value"})
	for i, r := range src.Rows {
		for _, f := range exportFigures {
			v, ok := f.get(r.Sample)
			if !ok || !finite(v) {
				continue
			}
			_ = cw.Write([]string{strconv.Itoa(i + 1), r.Sample.Key, r.Case, r.Variant, strconv.Itoa(r.Sample.Repeat), f.name, f.unit, strconv.FormatFloat(v, 'g', -1, 64)})
		}
		for _, mc := range sampleMessages(r.Sample) {
			_ = cw.Write([]string{strconv.Itoa(i + 1), r.Sample.Key, r.Case, r.Variant, strconv.Itoa(r.Sample.Repeat), "message: " + mc.Message, "count", strconv.FormatInt(mc.Count, 10)})
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// SummarySchema names the format of the JSON summary.
const SummarySchema = "benchrig.summary/v1"

// Summary is the computed summary of a results file, what `benchrig
// report -f json` writes: per case and variant, every figure as median
// [min–max] across repeats with the values, the failures by message and
// the healthy count; and the warnings the report shows.
type Summary struct {
	Schema string `json:"schema"`
	File   string `json:"file"`
	// Notice is the file's verification notice when it does not verify
	// (result.Report.Notice); absent when it does.
	Notice []string      `json:"notice,omitempty"`
	Title  string        `json:"title"`
	Tool   result.Tool   `json:"tool"`
	Notes  []string      `json:"notes"`
	Cells  []CellSummary `json:"cells"`
}

// CellSummary is one case and variant of a Summary.
type CellSummary struct {
	Case    string          `json:"case"`
	Variant string          `json:"variant"`
	Samples int             `json:"samples"`
	Healthy int             `json:"healthy"`
	Figures []FigureSummary `json:"figures"`
	// Errors, Timeouts, Unexpected and Reconnects are sums over the
	// repeats; Messages the most frequent messages with their counts.
	Errors     int64          `json:"errors"`
	Timeouts   int64          `json:"timeouts"`
	Unexpected int64          `json:"unexpected"`
	Reconnects int64          `json:"reconnects"`
	Messages   []messageCount `json:"messages"`
}

// FigureSummary is one figure across the repeats of a cell; Values are
// the repeats' values, sorted.
type FigureSummary struct {
	Name   string    `json:"name"`
	Unit   string    `json:"unit"`
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Values []float64 `json:"values"`
}

// Summarise computes the Summary of a results file.
func Summarise(src *Source) *Summary {
	g := newGrid(src.Rows)
	sum := &Summary{Schema: SummarySchema, File: src.Path, Notice: src.Notice, Title: src.Title, Tool: src.Tool, Notes: []string{}, Cells: []CellSummary{}}
	sum.Notes = append(sum.Notes, src.Notes...)
	sum.Notes = append(sum.Notes, sampleNotes(src.Rows)...)
	sum.Notes = append(sum.Notes, noiseNotes(g)...)
	sum.Notes = append(sum.Notes, aaNotes(g)...)
	sum.Notes = append(sum.Notes, planNotes(g)...)
	for _, c := range g.cases {
		for _, v := range g.variants {
			ss := g.at(c, v)
			if len(ss) == 0 {
				continue
			}
			cs := CellSummary{Case: c, Variant: v, Samples: len(ss), Figures: []FigureSummary{}, Messages: []messageCount{}}
			for _, s := range ss {
				if s.Error == "" && s.Verdict.Healthy {
					cs.Healthy++
				}
			}
			for _, f := range exportFigures {
				vals := metric{get: f.get}.values(ss)
				if len(vals) == 0 || f.name == "healthy" {
					continue
				}
				cs.Figures = append(cs.Figures, FigureSummary{Name: f.name, Unit: f.unit, Median: median(vals), Min: vals[0], Max: vals[len(vals)-1], Values: vals})
			}
			cs.Errors, cs.Timeouts, cs.Unexpected, cs.Reconnects = failureCounts(ss)
			msgs := cellMessages(ss)
			cs.Messages = append(cs.Messages, msgs[:min(len(msgs), topMessagesCase)]...)
			sum.Cells = append(sum.Cells, cs)
		}
	}
	return sum
}

// JSON writes v indented, with a final newline.
func JSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
