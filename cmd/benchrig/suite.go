package main

import (
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/agent"
	"github.com/benchrig/benchrig/internal/agent/launch"
	"github.com/benchrig/benchrig/internal/cli"
	"github.com/benchrig/benchrig/internal/execute"
	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/plan"
	"github.com/benchrig/benchrig/internal/verify"
)

func planCmd(stdout io.Writer) *cobra.Command {
	var sets []string
	var smoke bool
	c := &cobra.Command{
		Use:   "plan SUITE.yaml",
		Short: "Print the samples a suite expands to, in the order they run, and the estimated wall time",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			_, p, err := plan.Load(args[0], sets, smoke)
			if err != nil {
				return err
			}
			return p.Format(stdout)
		},
	}
	c.Flags().StringArrayVar(&sets, "set", nil, "override a suite value, e.g. --set connections=4,64 (repeatable; after the environment's CONNECTIONS=…)")
	c.Flags().BoolVar(&smoke, "smoke", false, "every cell once with short phases")
	return c
}

func runCmd(a *cli.App) *cobra.Command {
	var (
		sets                                             []string
		out                                              string
		smoke, resume, force, failUnhealthy, noCalibrate bool
		resumeChanged                                    bool
		agents                                           launch.Options
	)
	c := &cobra.Command{
		Use:   "run SUITE.yaml -o RESULTS.json",
		Short: "Run a suite's whole matrix, writing every sample to the results file as it finishes",
		Example: `  benchrig run examples/suites/http-demo.yaml -o results.json
  CONNECTIONS=4,64 REPEATS=5 benchrig run suite.yaml -o results.json
  benchrig run suite.yaml -o results.json --resume     # continue after a crash or Ctrl-C`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if out == "" {
				return exitcode.Usagef("-o/--out RESULTS.json is required")
			}
			if resume && force {
				return exitcode.Usagef("give --resume or --force, not both")
			}
			if agents.N == 0 && (agents.Local || c.Flags().Changed("listen")) {
				return exitcode.Usagef("--local and --listen go with --agents N")
			}
			return a.Invocation().RunSuite(args[0], execute.Output{Path: out, Force: force, Resume: resume || resumeChanged, ResumeChanged: resumeChanged}, sets, smoke, failUnhealthy, noCalibrate, agents)
		},
	}
	f := c.Flags()
	f.StringVarP(&out, "out", "o", "", "results file (JSON Lines: header, one line per sample, footer with a SHA-256)")
	f.StringArrayVar(&sets, "set", nil, "override a suite value, e.g. --set connections=4,64 (repeatable)")
	f.BoolVar(&smoke, "smoke", false, "prove the suite works: every cell once, short phases; results marked as smoke")
	f.BoolVar(&resume, "resume", false, "continue a partial results file, skipping the samples it holds")
	f.BoolVar(&force, "force", false, "replace an existing results file")
	f.BoolVar(&resumeChanged, "resume-changed", false, "resume although a target's binary, version or settings changed since the file began")
	f.BoolVar(&failUnhealthy, "fail-unhealthy", false, "exit with code 3 when some sample is UNHEALTHY or failed (after the whole plan ran)")
	f.BoolVar(&noCalibrate, "no-calibrate", false, "do not measure benchrig's own floor (latency and CPU per request against a null peer, ≤ 1 s) before the first sample")
	f.IntVar(&agents.N, "agents", 0, "run the load from N agents (benchrig agent), each a share of every cell, merged into one results file")
	f.StringVar(&agents.Listen, "listen", "127.0.0.1:7946", "with --agents: the coordinator's address for the agents")
	f.BoolVar(&agents.Local, "local", false, "with --agents: start the N agents on this machine")
	f.StringVar(&agents.TokenFile, "token-file", "", "with --agents: file holding the agents' shared token (default: $BENCHRIG_AGENT_TOKEN; --local makes one)")
	f.DurationVar(&agents.JoinFor, "join-for", 5*time.Minute, "with --agents: how long to wait for every agent to join")
	f.StringVar(&agents.TLSCert, "tls-cert", "", "with --agents: speak TLS to the agents with this certificate (PEM; with --tls-key)")
	f.StringVar(&agents.TLSKey, "tls-key", "", "with --agents: the certificate's key (PEM)")
	f.DurationVar(&agents.Timings.DeadMan, "dead-man", agent.DeadMan, "with --agents: an agent that hears nothing from the coordinator this long stops its load")
	f.DurationVar(&agents.Timings.AgentTimeout, "agent-timeout", agent.AgentTimeout, "with --agents: an agent silent this long is lost (its share of the sample fails)")
	f.BoolVar(&agents.LogResults, "log-results", false, "print the results file on stdout between markers at the end (for a pod's log; benchrig k8s fetch recovers it)")
	a.RegisterUI(c)
	return c
}

func verifyCmd(stdout io.Writer) *cobra.Command {
	var allowSmoke, asJSON bool
	c := &cobra.Command{
		Use:   "verify RESULTS.json",
		Short: "Check a results file: schema, checksum, plan re-expanded from the recorded suite, completeness, consistency",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return verify.File(args[0], allowSmoke, asJSON, stdout)
		},
	}
	c.Flags().BoolVar(&allowSmoke, "allow-smoke", false, "accept a smoke run's results")
	c.Flags().BoolVar(&asJSON, "json", false, "print the verdict as JSON (benchrig.verify/v1)")
	return c
}

func checksumCmd(stdout io.Writer) *cobra.Command {
	var check bool
	c := &cobra.Command{
		Use:   "checksum RESULTS.json",
		Short: "Write RESULTS.json.sha256 (sha256sum format) for publishing, or --check it",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return verify.Checksum(args[0], check, stdout)
		},
	}
	c.Flags().BoolVar(&check, "check", false, "verify RESULTS.json against RESULTS.json.sha256")
	return c
}
