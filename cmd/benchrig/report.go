package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/reportsrc"
)

// outputFlags registers the output flags report and compare share.
func outputFlags(c *cobra.Command, rf *reportsrc.Output, formats string) {
	c.Flags().StringVarP(&rf.Format, "format", "f", "", formats+" (default: from -o's extension, else text)")
	c.Flags().StringVarP(&rf.Out, "out", "o", "", "write the report to this file instead of standard output")
	c.Flags().BoolVar(&rf.AllowSmoke, "allow-smoke", false, "report a smoke run's results")
}

func reportCmd(stdout io.Writer) *cobra.Command {
	var rf reportsrc.Output
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
			return rf.Report(args[0], stdout)
		},
	}
	outputFlags(c, &rf, "text, md, html, csv (one row per sample and figure) or json (the computed summary)")
	return c
}

func compareCmd(stdout io.Writer) *cobra.Command {
	var rf reportsrc.Output
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
case: benchrig compare results.json --a prepared-one --b any; a case of one
key per request (a gRPC call: "1 key · 4 conns") is the same case as an
unkeyed protocol's ("4 conns": HTTP), so the same operation over two
protocols compares: --a grpc --b json. Each figure
shows A and B as median [min–max], the change of the medians and a
Mann–Whitney U test of the repeats; "~" means no significant difference at
--alpha. Four repeats per side are the fewest that can show a difference at
0.05; with fewer, changes are shown "(untested)".`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			return rf.Compare(reportsrc.Comparison{Files: args, A: va, B: vb, Alpha: alpha, JSON: asJSON, FailIf: failIf}, stdout, c.ErrOrStderr())
		},
	}
	outputFlags(c, &rf, "text, md, html or json (the computed comparison)")
	c.Flags().BoolVar(&asJSON, "json", false, "write the computed comparison as JSON (same as --format json)")
	c.Flags().StringArrayVar(&failIf, "fail-if", nil, "exit 3 when a change is significant and past this threshold, e.g. 'req/s < -5%' or 'p99 > +10%', or 'misses > 0%' (B's share of reads that missed, absolute) (repeatable; figures: "+report.GateFigureNames+")")
	c.Flags().Float64Var(&alpha, "alpha", 0.05, "significance level of the test")
	c.Flags().StringVar(&va, "a", "", "compare only this variant of A (its label, or a part of it naming one variant)")
	c.Flags().StringVar(&vb, "b", "", "compare only this variant of B (of A when one file is given)")
	return c
}
