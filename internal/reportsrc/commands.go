package reportsrc

import (
	"fmt"
	"io"
	"strings"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/gate"
	"github.com/benchrig/benchrig/internal/report"
)

// Report is `benchrig report PATH`: the terminal report, or the document
// (md, html), rows (csv) or summary (json) the output asks for.
func (rf *Output) Report(path string, stdout io.Writer) error {
	format, err := rf.ResolvedFormat("text", "md", "html", "csv", "json")
	if err != nil {
		return err
	}
	src, err := Load(path, rf.AllowSmoke)
	if err != nil {
		return err
	}
	switch {
	case format == "text" && rf.Out == "":
		return Console(stdout, src)
	case format == "csv":
		return rf.Write(func(w io.Writer) error { return report.CSV(w, src) }, stdout)
	case format == "json":
		return rf.Write(func(w io.Writer) error { return report.JSON(w, report.Summarise(src)) }, stdout)
	}
	return rf.Write(DocRenderer(report.ReportDoc(src), format), stdout)
}

// ConsoleFile prints a results file's comparison tables (the end of
// benchrig run).
func ConsoleFile(path string, allowSmoke bool, stdout io.Writer) error {
	src, err := Load(path, allowSmoke)
	if err != nil {
		return err
	}
	return Console(stdout, src)
}

// Console writes the terminal report of src, the verification notice
// first when the file does not verify: a reader who sees figures must
// first see that they may not be what was measured.
func Console(stdout io.Writer, src *report.Source) error {
	if len(src.Notice) > 0 {
		fmt.Fprint(stdout, strings.Join(src.Notice, "\n")+"\n\n")
	}
	fmt.Fprintf(stdout, "%s · %s · %d samples\n\n", src.Title, src.Path, len(src.Rows))
	return report.Console(stdout, src)
}

// Comparison is what `benchrig compare` is asked beside the output: its
// one or two files, the variants of each side (--a, --b), the test's
// significance level (--alpha), --json and the --fail-if gates.
type Comparison struct {
	Files  []string
	A, B   string
	Alpha  float64
	JSON   bool
	FailIf []string
}

// Compare is `benchrig compare`: the comparison written as the output
// asks, then checked against the gates (warnings on stderr).
func (rf *Output) Compare(cmp Comparison, stdout, stderr io.Writer) error {
	args, va, vb, alpha := cmp.Files, cmp.A, cmp.B, cmp.Alpha
	if cmp.JSON {
		if rf.Format != "" && rf.Format != "json" {
			return exitcode.Usagef("--json and --format %s: give one", rf.Format)
		}
		rf.Format = "json"
	}
	format, err := rf.ResolvedFormat("text", "md", "html", "json")
	if err != nil {
		return err
	}
	gates, err := gate.Parse(cmp.FailIf)
	if err != nil {
		return err
	}
	if alpha <= 0 || alpha >= 1 {
		return exitcode.Usagef("--alpha %v: want a significance level between 0 and 1, such as 0.05", alpha)
	}
	if len(args) == 1 && (va == "" || vb == "") {
		return exitcode.Usagef("one file: give the two variants to compare with --a and --b")
	}
	a, err := Load(args[0], rf.AllowSmoke)
	if err != nil {
		return err
	}
	b := a
	if len(args) == 2 {
		if b, err = Load(args[1], rf.AllowSmoke); err != nil {
			return err
		}
	}
	cs, err := compareSources(a, b, va, vb, alpha, format, rf, stdout)
	if err != nil {
		return WithNotice(err, a, b)
	}
	return gate.Apply(cs, gates, stderr)
}

// compareSources writes the comparison of a and b (of their variants va
// and vb when given) in format, and returns it for the gates.
func compareSources(a, b *report.Source, va, vb string, alpha float64, format string, rf *Output, stdout io.Writer) (*report.CompareSummary, error) {
	var err error
	if va != "" {
		if a, err = OnlyVariant(a, va, "--a"); err != nil {
			return nil, err
		}
	}
	if vb != "" {
		if b, err = OnlyVariant(b, vb, "--b"); err != nil {
			return nil, err
		}
	}
	opts := report.CompareOptions{Alpha: alpha}
	cs, err := report.Compare(a, b, opts)
	if err != nil {
		return nil, err
	}
	if format == "json" {
		return cs, rf.Write(func(w io.Writer) error { return report.JSON(w, cs) }, stdout)
	}
	d, err := report.CompareDoc(a, b, opts)
	if err != nil {
		return nil, err
	}
	return cs, rf.Write(DocRenderer(d, format), stdout)
}
