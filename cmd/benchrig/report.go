package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/report"
)

// reportFlags are the output flags report and compare share.
type reportFlags struct {
	format     string
	out        string
	allowSmoke bool
}

func (rf *reportFlags) register(c *cobra.Command, formats string) {
	c.Flags().StringVarP(&rf.format, "format", "f", "", formats+" (default: from -o's extension, else text)")
	c.Flags().StringVarP(&rf.out, "out", "o", "", "write the report to this file instead of standard output")
	c.Flags().BoolVar(&rf.allowSmoke, "allow-smoke", false, "report a smoke run's results")
}

// extFormats are the output extensions a report can write, by format.
var extFormats = map[string]string{".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".csv": "csv", ".json": "json", ".txt": "text"}

// resolvedFormat is the format asked for, or the one -o's extension
// names; one of allowed. An unknown format, an -o extension no format
// writes, or one naming another format than -f is an error.
func (rf *reportFlags) resolvedFormat(allowed ...string) (string, error) {
	f := strings.ToLower(rf.format)
	if f == "markdown" {
		f = "md"
	}
	ext := strings.ToLower(filepath.Ext(rf.out))
	byExt, known := extFormats[ext]
	if rf.out != "" && ext != "" && !known {
		return "", exitcode.Usagef("-o %s: cannot write %s files; use -o with .txt, .md, .html, .csv or .json", rf.out, ext)
	}
	switch {
	case f == "" && known:
		f = byExt
	case f == "":
		f = "text"
	case known && byExt != f:
		return "", exitcode.Usagef("--format %s, but -o %s names %s: give one or make them agree", rf.format, rf.out, byExt)
	}
	for _, a := range allowed {
		if f == a {
			return f, nil
		}
	}
	return "", exitcode.Usagef("--format %q: want %s", rf.format, formatList(allowed))
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

// docRenderer renders a Doc in format (text, md or html).
func docRenderer(d *report.Doc, format string) func(io.Writer) error {
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

// write renders to -o or stdout. A file is written whole or not at all
// (a temporary file renamed into place).
func (rf *reportFlags) write(render func(io.Writer) error, stdout io.Writer) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	if rf.out == "" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(rf.out), "."+filepath.Base(rf.out)+".*")
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
		err = os.Rename(tmp.Name(), rf.out)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write report %s: %w", rf.out, err)
	}
	fmt.Fprintf(stdout, "Report written to %s\n", rf.out)
	return nil
}

func reportCmd(stdout io.Writer) *cobra.Command {
	var rf reportFlags
	c := &cobra.Command{
		Use:   "report RESULTS.json",
		Short: "Report a results file (benchrig run, or -o of http/pg/resp): tables, or Markdown / self-contained HTML with charts",
		Long: `Report a results file: the comparison tables (median [min–max] across repeats)
on the terminal, or with --format md|html (or -o report.md / report.html) a
document with throughput, latency, server and client resources, the
constant-rate figures, target statistics, provenance and every sample; the
HTML page is self-contained (inline SVG charts, no external resources).`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			format, err := rf.resolvedFormat("text", "md", "html", "csv", "json")
			if err != nil {
				return err
			}
			src, err := loadSource(args[0], rf.allowSmoke)
			if err != nil {
				return err
			}
			switch {
			case format == "text" && rf.out == "":
				return consoleReport(stdout, src)
			case format == "csv":
				return rf.write(func(w io.Writer) error { return report.CSV(w, src) }, stdout)
			case format == "json":
				return rf.write(func(w io.Writer) error { return report.JSON(w, report.Summarise(src)) }, stdout)
			}
			return rf.write(docRenderer(report.ReportDoc(src), format), stdout)
		},
	}
	rf.register(c, "text, md, html, csv (one row per sample and figure) or json (the computed summary)")
	return c
}

// reportFile prints a results file's comparison tables (the end of
// benchrig run).
func reportFile(path string, allowSmoke bool, stdout io.Writer) error {
	src, err := loadSource(path, allowSmoke)
	if err != nil {
		return err
	}
	return consoleReport(stdout, src)
}

// consoleReport writes the terminal report of src, the verification
// notice first when the file does not verify: a reader who sees figures
// must first see that they may not be what was measured.
func consoleReport(stdout io.Writer, src *report.Source) error {
	if len(src.Notice) > 0 {
		fmt.Fprint(stdout, strings.Join(src.Notice, "\n")+"\n\n")
	}
	fmt.Fprintf(stdout, "%s · %s · %d samples\n\n", src.Title, src.Path, len(src.Rows))
	return report.Console(stdout, src)
}

func compareCmd(stdout io.Writer) *cobra.Command {
	var rf reportFlags
	var alpha float64
	var va, vb string
	var asJSON bool
	var failIf []string
	c := &cobra.Command{
		Use:   "compare A.json [B.json]",
		Short: "Compare two results files, or two variants of one, cell by cell with a significance test over the repeats (like benchstat)",
		Long: `Compare two results files (of benchrig run, or -o of http/pg/resp) cell by
cell: the same case and variant in both, or the same case when each side has
one variant (two runs of one suite against two builds). With --a and --b, the
sides are those variants only (of one file, or of A and B), compared case by
case: benchrig compare results.json --a prepared-one --b any. Each figure
shows A and B as median [min–max], the change of the medians and a
Mann–Whitney U test of the repeats; "~" means no significant difference at
--alpha. Four repeats per side are the fewest that can show a difference at
0.05; with fewer, changes are shown "(untested)".`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			if asJSON {
				if rf.format != "" && rf.format != "json" {
					return exitcode.Usagef("--json and --format %s: give one", rf.format)
				}
				rf.format = "json"
			}
			format, err := rf.resolvedFormat("text", "md", "html", "json")
			if err != nil {
				return err
			}
			var gates []report.Gate
			for _, f := range failIf {
				g, err := report.ParseGate(f)
				if err != nil {
					return exitcode.Usage(err)
				}
				gates = append(gates, g)
			}
			if alpha <= 0 || alpha >= 1 {
				return exitcode.Usagef("--alpha %v: want a significance level between 0 and 1, such as 0.05", alpha)
			}
			if len(args) == 1 && (va == "" || vb == "") {
				return exitcode.Usagef("one file: give the two variants to compare with --a and --b")
			}
			a, err := loadSource(args[0], rf.allowSmoke)
			if err != nil {
				return err
			}
			b := a
			if len(args) == 2 {
				if b, err = loadSource(args[1], rf.allowSmoke); err != nil {
					return err
				}
			}
			cs, err := compareSources(a, b, va, vb, alpha, format, &rf, stdout)
			if err != nil {
				return withNotice(err, a, b)
			}
			return applyGates(cs, gates, c.ErrOrStderr())
		},
	}
	rf.register(c, "text, md, html or json (the computed comparison)")
	c.Flags().BoolVar(&asJSON, "json", false, "write the computed comparison as JSON (same as --format json)")
	c.Flags().StringArrayVar(&failIf, "fail-if", nil, "exit 3 when a change is significant and past this threshold, e.g. 'req/s < -5%' or 'p99 > +10%', or 'misses > 0%' (B's share of reads that missed, absolute) (repeatable; figures: "+report.GateFigureNames+")")
	c.Flags().Float64Var(&alpha, "alpha", 0.05, "significance level of the test")
	c.Flags().StringVar(&va, "a", "", "compare only this variant of A (its label, or a part of it naming one variant)")
	c.Flags().StringVar(&vb, "b", "", "compare only this variant of B (of A when one file is given)")
	return c
}

// compareSources writes the comparison of a and b (of their variants va
// and vb when given) in format, and returns it for the gates.
func compareSources(a, b *report.Source, va, vb string, alpha float64, format string, rf *reportFlags, stdout io.Writer) (*report.CompareSummary, error) {
	var err error
	if va != "" {
		if a, err = onlyVariant(a, va, "--a"); err != nil {
			return nil, err
		}
	}
	if vb != "" {
		if b, err = onlyVariant(b, vb, "--b"); err != nil {
			return nil, err
		}
	}
	opts := report.CompareOptions{Alpha: alpha}
	cs, err := report.Compare(a, b, opts)
	if err != nil {
		return nil, err
	}
	if format == "json" {
		return cs, rf.write(func(w io.Writer) error { return report.JSON(w, cs) }, stdout)
	}
	d, err := report.CompareDoc(a, b, opts)
	if err != nil {
		return nil, err
	}
	return cs, rf.write(docRenderer(d, format), stdout)
}

// withNotice puts the verification notices of the sources before err: a
// command that gives up on a file that does not verify says that first,
// in the one notice format (an error it wraps keeps its exit code).
func withNotice(err error, srcs ...*report.Source) error {
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

// onlyVariant is src with the rows of one variant: the one labelled name,
// or the one whose label alone contains name.
func onlyVariant(src *report.Source, name, flag string) (*report.Source, error) {
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
		return nil, exitcode.Usagef("%s %q: no such variant in %s; it has %s", flag, name, src.Path, strings.Join(quoteAll(labels), ", "))
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

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
