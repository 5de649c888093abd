package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/export"
)

// exportCmd is `benchrig export`: figures of a results file in other
// tools' formats.
func exportCmd(stdout io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "export",
		Short: "Export a results file's figures in other tools' formats (hgrm)",
		Args:  cobra.ArbitraryArgs,
		// export does nothing by itself: a missing or unknown format is a
		// usage error naming the command that writes it.
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exitcode.Usagef("export needs a format: benchrig export hgrm RESULTS.json --case CASE -o DIR; CSV and JSON: benchrig report RESULTS.json -f csv|json")
			}
			return exitcode.UnknownCommand(c, args[0])
		},
	}
	c.AddCommand(exportHgrmCmd(stdout))
	return c
}

func exportHgrmCmd(stdout io.Writer) *cobra.Command {
	var caseName, variant, dir string
	var allowSmoke bool
	c := &cobra.Command{
		Use:   "hgrm RESULTS.json --case CASE -o DIR",
		Short: "Write each sample's latency as an HdrHistogram percentile distribution (.hgrm, like wrk2 and memtier), for HdrHistogram's plotter",
		Long: `Write, for every sample of one case (and variant), its latency histogram as an
HdrHistogram percentile distribution file in milliseconds: DIR/CASE_VARIANT_rN.hgrm,
and at a constant rate DIR/CASE_VARIANT_rN.service.hgrm for the service time
(the headline one is corrected, measured from each request's due time).
Plot them with https://hdrhistogram.github.io/HdrHistogram/plotFiles.html.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if caseName == "" {
				return exitcode.Usagef("--case is required: the case whose samples to export")
			}
			if dir == "" {
				return exitcode.Usagef("-o/--out DIR is required")
			}
			return export.HgrmFile(args[0], allowSmoke, caseName, variant, dir, stdout)
		},
	}
	c.Flags().StringVar(&caseName, "case", "", "the case to export (its label, as the report shows it)")
	c.Flags().StringVar(&variant, "variant", "", "only this variant of the case (default: every variant)")
	c.Flags().StringVarP(&dir, "out", "o", "", "directory to write the .hgrm files to (created if needed)")
	c.Flags().BoolVar(&allowSmoke, "allow-smoke", false, "export a smoke run's results")
	return c
}
