package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/report"
)

// reportFlags are the output flags report and compare share.
type reportFlags struct {
	format     string
	out        string
	allowSmoke bool
}

func (rf *reportFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&rf.format, "format", "", "text, md or html (default: from -o's extension, else text)")
	c.Flags().StringVarP(&rf.out, "output", "o", "", "write the report to this file instead of standard output")
	c.Flags().BoolVar(&rf.allowSmoke, "allow-smoke", false, "report a smoke run's results")
}

// resolvedFormat is the format asked for, or the one -o's extension names.
func (rf *reportFlags) resolvedFormat() (string, error) {
	f := strings.ToLower(rf.format)
	if f == "" {
		switch strings.ToLower(filepath.Ext(rf.out)) {
		case ".md", ".markdown":
			f = "md"
		case ".html", ".htm":
			f = "html"
		default:
			f = "text"
		}
	}
	switch f {
	case "text", "md", "html":
		return f, nil
	case "markdown":
		return "md", nil
	}
	return "", usagef("--format %q: want text, md or html", rf.format)
}

// write renders d in format to -o or stdout. A file is written whole or
// not at all (a temporary file renamed into place).
func (rf *reportFlags) write(d *report.Doc, format string, stdout io.Writer) error {
	var buf bytes.Buffer
	var err error
	switch format {
	case "md":
		err = report.Markdown(&buf, d)
	case "html":
		err = report.HTML(&buf, d)
	default:
		err = report.Text(&buf, d)
	}
	if err != nil {
		return err
	}
	if rf.out == "" {
		_, err = stdout.Write(buf.Bytes())
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
			format, err := rf.resolvedFormat()
			if err != nil {
				return err
			}
			src, err := loadSource(args[0], rf.allowSmoke)
			if err != nil {
				return err
			}
			if format == "text" && rf.out == "" {
				fmt.Fprintf(stdout, "%s · %s · %d samples\n\n", src.Title, src.Path, len(src.Rows))
				return report.Matrix(stdout, src.Rows)
			}
			return rf.write(report.ReportDoc(src), format, stdout)
		},
	}
	rf.register(c)
	return c
}

// reportFile prints a results file's comparison tables (the end of
// benchrig run).
func reportFile(path string, allowSmoke bool, stdout io.Writer) error {
	src, err := loadSource(path, allowSmoke)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s · %s · %d samples\n\n", src.Title, src.Path, len(src.Rows))
	return report.Matrix(stdout, src.Rows)
}

func compareCmd(stdout io.Writer) *cobra.Command {
	var rf reportFlags
	var alpha float64
	c := &cobra.Command{
		Use:   "compare A.json B.json",
		Short: "Compare two results files cell by cell, with a significance test over the repeats (like benchstat)",
		Long: `Compare two results files (of benchrig run, or -o of http/pg/resp) cell by
cell: the same case and variant in both, or the same case when each file has
one variant (two runs of one suite against two builds). Each figure shows A and
B as median [min–max], the change of the medians and a Mann–Whitney U test of
the repeats; "~" means no significant difference at --alpha. Four repeats per
side are the fewest that can show a difference at 0.05.`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			format, err := rf.resolvedFormat()
			if err != nil {
				return err
			}
			if alpha <= 0 || alpha >= 1 {
				return usagef("--alpha %v: want a significance level between 0 and 1, such as 0.05", alpha)
			}
			a, err := loadSource(args[0], rf.allowSmoke)
			if err != nil {
				return err
			}
			b, err := loadSource(args[1], rf.allowSmoke)
			if err != nil {
				return err
			}
			d, err := report.CompareDoc(a, b, report.CompareOptions{Alpha: alpha})
			if err != nil {
				return err
			}
			return rf.write(d, format, stdout)
		},
	}
	rf.register(c)
	c.Flags().Float64Var(&alpha, "alpha", 0.05, "significance level of the test")
	return c
}
