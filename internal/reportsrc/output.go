package reportsrc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/report"
)

// Output is what the output flags report and compare share ask for:
// --format, -o/--out and --allow-smoke.
type Output struct {
	Format     string
	Out        string
	AllowSmoke bool
}

// extFormats are the output extensions a report can write, by format.
var extFormats = map[string]string{".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".csv": "csv", ".json": "json", ".txt": "text"}

// ResolvedFormat is the format asked for, or the one -o's extension
// names; one of allowed. An unknown format, an -o extension no format
// writes, or one naming another format than -f is an error.
func (rf *Output) ResolvedFormat(allowed ...string) (string, error) {
	f := strings.ToLower(rf.Format)
	if f == "markdown" {
		f = "md"
	}
	ext := strings.ToLower(filepath.Ext(rf.Out))
	byExt, known := extFormats[ext]
	if rf.Out != "" && ext != "" && !known {
		return "", exitcode.Usagef("-o %s: cannot write %s files; use -o with .txt, .md, .html, .csv or .json", rf.Out, ext)
	}
	switch {
	case f == "" && known:
		f = byExt
	case f == "":
		f = "text"
	case known && byExt != f:
		return "", exitcode.Usagef("--format %s, but -o %s names %s: give one or make them agree", rf.Format, rf.Out, byExt)
	}
	for _, a := range allowed {
		if f == a {
			return f, nil
		}
	}
	return "", exitcode.Usagef("--format %q: want %s", rf.Format, formatList(allowed))
}

// formatList says which formats are accepted: "text, md or html for a
// report, csv or json for data".
func formatList(allowed []string) string {
	var docs, data []string
	for _, a := range allowed {
		if a == "csv" || a == "json" {
			data = append(data, a)
		} else {
			docs = append(docs, a)
		}
	}
	or := func(ss []string) string {
		if len(ss) < 2 {
			return strings.Join(ss, "")
		}
		return strings.Join(ss[:len(ss)-1], ", ") + " or " + ss[len(ss)-1]
	}
	if len(data) == 0 {
		return or(docs)
	}
	return or(docs) + " for a report, " + or(data) + " for data"
}

// DocRenderer renders a Doc in format (text, md or html).
func DocRenderer(d *report.Doc, format string) func(io.Writer) error {
	return func(w io.Writer) error {
		switch format {
		case "md":
			return report.Markdown(w, d)
		case "html":
			return report.HTML(w, d)
		}
		return report.Text(w, d)
	}
}

// Write renders to -o or stdout. A file is written whole or not at all
// (a temporary file renamed into place).
func (rf *Output) Write(render func(io.Writer) error, stdout io.Writer) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	if rf.Out == "" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(rf.Out), "."+filepath.Base(rf.Out)+".*")
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if _, err = tmp.Write(buf.Bytes()); err == nil {
		_ = tmp.Chmod(0o644) // CreateTemp makes it 0600; a report is to be read
		err = tmp.Close()
	} else {
		tmp.Close()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), rf.Out)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write report %s: %w", rf.Out, err)
	}
	fmt.Fprintf(stdout, "Report written to %s\n", rf.Out)
	return nil
}
