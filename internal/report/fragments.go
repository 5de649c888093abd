package report

import (
	"strings"

	"github.com/benchrig/benchrig/internal/result"
)

// The pieces of the HTML report for pages that show a report's parts one
// at a time (the live page of a run): drawn by the same templates and
// style sheet as HTML, so a chart or table cannot look different there.

// ChartsHTML draws charts as the HTML report draws a section's small
// charts: a grid of inline SVGs (over-time panels at their panel size),
// every text escaped. No charts give "".
func ChartsHTML(cs []Chart) (string, error) {
	var b strings.Builder
	if err := pageTemplate().ExecuteTemplate(&b, "grid", smallCharts(cs)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// TableHTML draws t as the HTML report draws a table: in a box that
// scrolls sideways on a narrow screen, label columns left aligned, every
// cell escaped.
func TableHTML(t Table) (string, error) {
	var b strings.Builder
	if err := pageTemplate().ExecuteTemplate(&b, "table", newHTMLTable(t)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// SamplesTable is the report's table of samples: one row per sample in
// the order of rows, with its headline figures and its verdict (and why).
func SamplesTable(rows []Row) Table { return samplesTable(rows) }

// StyleSheet is the HTML report's style sheet, for a page built of its
// pieces.
func StyleSheet() string { return pageCSS }

// Verdict is the word the report gives a sample's verdict: HEALTHY,
// UNHEALTHY or FAILED.
func Verdict(s *result.Sample) string { return verdictWord(s) }
