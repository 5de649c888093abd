package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/cli"
	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/gate"
	"github.com/benchrig/benchrig/internal/history"
	"github.com/benchrig/benchrig/internal/plan"
)

// historyMarks finds the change points `history show` marks.
var historyMarks history.ChangePoints = history.DetectChanges

// historyCmd is `benchrig history`: a database of results files across
// runs (SQLite by default, PostgreSQL with --db-env) and their trends.
func historyCmd(a *cli.App) *cobra.Command {
	var loc history.Location
	c := &cobra.Command{
		Use:   "history",
		Short: "Keep verified results files in a database (SQLite, or PostgreSQL with --db-env) and show each cell's figures across runs",
		Long: `Keep verified results files in a database and show each cell's figures across runs.
The database is SQLite at $XDG_DATA_HOME/benchrig/history.db (else
~/.local/share/benchrig/history.db) unless --db PATH names another file, or
PostgreSQL with --db-env VAR, the environment variable holding its DSN.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exitcode.Usagef("history needs a subcommand: add, check, list, show, export or remove (benchrig history --help)")
			}
			return exitcode.UnknownCommand(c, args[0])
		},
	}
	c.PersistentFlags().StringVar(&loc.Path, "db", "", "the SQLite history file (default $XDG_DATA_HOME/benchrig/history.db, else ~/.local/share/benchrig/history.db)")
	c.PersistentFlags().StringVar(&loc.Env, "db-env", "", "an environment variable holding a PostgreSQL DSN: the history is there (never give a DSN on the command line)")
	open := func(c *cobra.Command) (*history.Store, error) { return history.Open(c.Context(), loc, a.Secrets) }
	c.AddCommand(historyAddCmd(a.Stdout, open), historyListCmd(a.Stdout, open), historyRemoveCmd(a.Stdout, open),
		historyExportCmd(a.Stdout, open), historyShowCmd(a.Stdout, open), historyCheckCmd(a.Stdout, open))
	return c
}

type historyOpener func(c *cobra.Command) (*history.Store, error)

// with runs f on the opened store and closes it.
func (open historyOpener) with(c *cobra.Command, f func(s *history.Store) error) error {
	s, err := open(c)
	if err != nil {
		return err
	}
	defer s.Close()
	return f(s)
}

func historyAddCmd(stdout io.Writer, open historyOpener) *cobra.Command {
	var branch string
	c := &cobra.Command{
		Use:   "add RESULTS.json…",
		Short: "Import verified results files (one transaction each; a file already imported adds nothing)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if c.Flags().Changed("branch") {
				if err := history.CheckBranch(branch); err != nil {
					return exitcode.Usage(err)
				}
			}
			return open.with(c, func(s *history.Store) error {
				return s.AddFiles(c.Context(), args, history.AddOptions{Branch: branch, Replan: plan.RecordedEntries}, stdout)
			})
		},
	}
	c.Flags().StringVar(&branch, "branch", "", `the branch the runs measured (default "default": results files record the targets' git revision, not a branch)`)
	return c
}

func historyListCmd(stdout io.Writer, open historyOpener) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the runs: id, start, suite, branch, revision, host, samples",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return open.with(c, func(s *history.Store) error {
				runs, err := s.Runs(c.Context())
				if err != nil {
					return err
				}
				return history.WriteRuns(stdout, runs)
			})
		},
	}
}

func historyRemoveCmd(stdout io.Writer, open historyOpener) *cobra.Command {
	var reason string
	c := &cobra.Command{
		Use:   "remove RUN --reason TEXT",
		Short: "Drop a run from the history, recording when and why",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := history.ParseRun(args[0])
			if err != nil {
				return exitcode.Usage(err)
			}
			if err := history.CheckReason(reason); err != nil {
				return exitcode.Usage(err)
			}
			return open.with(c, func(s *history.Store) error {
				if err := s.Remove(c.Context(), id, reason); err != nil {
					return err
				}
				_, err := io.WriteString(stdout, "removed run "+args[0]+"\n")
				return err
			})
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why the run is dropped (required; kept in the removed table; at most 1000 bytes)")
	return c
}

func historyExportCmd(stdout io.Writer, open historyOpener) *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "export RUN -o RESULTS.json",
		Short: "Write a run back as its original results file, byte for byte",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := history.ParseRun(args[0])
			if err != nil {
				return exitcode.Usage(err)
			}
			if out == "" {
				return exitcode.Usagef("-o/--out FILE is required: the results file to write")
			}
			return open.with(c, func(s *history.Store) error {
				if err := history.WriteFile(out, func(w io.Writer) error { return s.Export(c.Context(), id, w) }); err != nil {
					return err
				}
				_, err := io.WriteString(stdout, "run "+args[0]+" written to "+out+"\n")
				return err
			})
		},
	}
	c.Flags().StringVarP(&out, "out", "o", "", "the results file to write")
	return c
}

func historyShowCmd(stdout io.Writer, open historyOpener) *cobra.Command {
	var o history.ShowOptions
	var figure string
	c := &cobra.Command{
		Use:   "show [--suite S] [--cell C] [--figure F] [-o trends.html]",
		Short: "Print each cell's figure across runs in time order (median [min–max] of each run's repeats), or draw the trends as HTML",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			f, err := history.FigureNamed(figure)
			if err != nil {
				return exitcode.Usage(err)
			}
			o.Figures = []history.Figure{f}
			if o.HTML != "" && !c.Flags().Changed("figure") {
				o.Figures = history.Figures[:4]
			}
			o.Marks = historyMarks
			return open.with(c, func(s *history.Store) error { return s.ShowTo(c.Context(), o, stdout) })
		},
	}
	c.Flags().StringVar(&o.Suite, "suite", "", "only this suite")
	c.Flags().StringVar(&o.Cell, "cell", "", "only this cell (its id, as the report and the plan show it)")
	c.Flags().StringVar(&o.Branch, "branch", "", "only this branch")
	c.Flags().StringVar(&figure, "figure", "req/s", "the figure: req/s, p99, server-us, peak-mem, p50, p90, max, client-cpu, errors")
	c.Flags().BoolVar(&o.AnyHost, "any-host", false, "put runs of different hosts (CPU model, cores, kernel) in one series")
	c.Flags().StringVarP(&o.HTML, "out", "o", "", "write the trends as an HTML page (one small chart per cell and figure: req/s, p99, server-us and peak-mem unless --figure)")
	return c
}

func historyCheckCmd(stdout io.Writer, open historyOpener) *cobra.Command {
	var branch string
	o := history.CheckOptions{Window: 20, Alpha: 0.05}
	c := &cobra.Command{
		Use:   "check RESULTS.json [--fail-if GATE]… [--window N]",
		Short: "Import a results file (as add does) and exit 3 when it is a significant regression against the runs before it since their last change point",
		Long: `Import a results file (as add does: a file already imported adds nothing),
then test it, cell by cell, against the runs before it in its series since
the series' last change point (at most --window of them): a Mann–Whitney U
test of the repeats and the change of the medians past each --fail-if
threshold, in the direction the figure gets worse. Exit 3 when a gate
fails, with the evidence; gates are written as compare's --fail-if
(default: 'req/s < -5%' and 'p99 > +5%'; the figures: req/s, p50, p99,
server-us, peak-mib). A run found bad can be dropped with history remove.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if c.Flags().Changed("branch") {
				if err := history.CheckBranch(branch); err != nil {
					return exitcode.Usage(err)
				}
			}
			if o.Window < 1 || o.Window > 1000 {
				return exitcode.Usagef("--window %d: want 1 to 1000 earlier runs", o.Window)
			}
			if !(o.Alpha > 0 && o.Alpha < 1) {
				return exitcode.Usagef("--alpha %v: want a significance level between 0 and 1, such as 0.05", o.Alpha)
			}
			for _, g := range o.Gates {
				if _, err := gate.Parse([]string{g}); err != nil {
					return err
				}
			}
			return open.with(c, func(s *history.Store) error {
				a, err := s.Add(c.Context(), args[0], history.AddOptions{Branch: branch, Replan: plan.RecordedEntries})
				if err != nil {
					return err
				}
				all, bad, err := s.Check(c.Context(), a.Run, o)
				if err != nil {
					return exitcode.Usage(err)
				}
				fmt.Fprintf(stdout, "run %d (%s): checked against up to %d earlier runs of each series\n", a.Run, args[0], o.Window)
				if err := history.WriteChecked(stdout, all); err != nil {
					return err
				}
				if len(bad) > 0 {
					var failures []string
					for _, b := range bad {
						failures = append(failures, fmt.Sprintf("--fail-if %q: %s · %s: %s", b.Gate, b.Cell, b.Variant, b.Verdict.Evidence))
					}
					return gate.RegressionError{Failures: failures}
				}
				return nil
			})
		},
	}
	c.Flags().StringArrayVar(&o.Gates, "fail-if", nil, "a gate, as compare's: 'req/s < -5%', 'p99 > +10%' (repeatable; default 'req/s < -5%' and 'p99 > +5%')")
	c.Flags().IntVar(&o.Window, "window", 20, "the earlier runs of each series the run is tested against, since its last change point (1 to 1000)")
	c.Flags().Float64Var(&o.Alpha, "alpha", 0.05, "the U test's significance level")
	c.Flags().StringVar(&branch, "branch", "", "the branch the run measured, as add's")
	c.Flags().BoolVar(&o.AnyHost, "any-host", false, "test against runs of other hosts too")
	return c
}
