package reportsrc

import (
	"errors"
	"testing"

	"github.com/benchrig/benchrig/internal/exitcode"
)

// TestResolvedFormat: the format is --format, else -o's extension, else
// text; an extension no format writes, a disagreement and a format the
// command does not write are usage errors naming what is accepted.
func TestResolvedFormat(t *testing.T) {
	for _, tc := range []struct {
		format, out string
		want, err   string
	}{
		{"", "", "text", ""},
		{"", "r.HTML", "html", ""},
		{"markdown", "r.md", "md", ""},
		{"csv", "", "", `--format "csv": want text, md or html for a report, json for data`},
		{"", "r.pdf", "", "-o r.pdf: cannot write .pdf files; use -o with .txt, .md, .html, .csv or .json"},
		{"md", "r.html", "", "--format md, but -o r.html names html: give one or make them agree"},
	} {
		rf := Output{Format: tc.format, Out: tc.out}
		got, err := rf.ResolvedFormat("text", "md", "html", "json")
		var u exitcode.UsageError
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("-f %q -o %q: %q, %v; want %q", tc.format, tc.out, got, err, tc.want)
		case tc.err != "" && (err == nil || err.Error() != tc.err || !errors.As(err, &u)):
			t.Errorf("-f %q -o %q: %v; want the usage error %q", tc.format, tc.out, err, tc.err)
		}
	}
}
