package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/quick"
	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
)

// The quick modes (benchrig http|pg|resp) are suites of one target: their
// flags build an in-memory suite (package quick), which runs through the same
// Runner, fair order, phases, verdicts and results file as `benchrig run`.

func toolInfo() result.Tool {
	t := result.ReadTool(version)
	if commit != "" {
		t.Commit, t.Dirty = strings.TrimSuffix(commit, "-dirty"), strings.HasSuffix(commit, "-dirty")
	}
	return t
}

// maxMissUsage is the help of --max-miss (benchrig pg and resp).
const maxMissUsage = "health threshold: largest tolerated share (0–1) of reads answered without a value for a key (default 0 where benchrig filled the keys, else misses are reported and tolerated)"

// quickFlags are the flags every quick mode shares: the suite's options
// (quick.Common) and where the results go.
type quickFlags struct {
	quick.Common
	out           string
	force, resume bool
	resumeChanged bool
	json          bool
	failUnhealthy bool
	noCalibrate   bool
}

func (q *quickFlags) register(c *cobra.Command, defaultConns int) {
	f := c.Flags()
	q.Conns, q.Pipelines = []int{defaultConns}, []int{1}
	f.VarP(&intList{p: &q.Conns}, "connections", "c", "connections (workers); a list such as 4,64 runs one case per value (default 32 with --rate)")
	f.VarP(&intList{p: &q.Pipelines}, "pipeline", "p", "requests in flight per connection (closed loop); a list runs one case per value")
	durationVarP(f, &q.Duration, "duration", "d", 10*time.Second, "length of the recorded load window")
	f.Int64VarP(&q.Requests, "requests", "n", 0, "stop after this many requests (alone: no duration bound)")
	durationVarP(f, &q.Warmup, "warmup", "", 0, "load run before the window and not recorded")
	f.IntVarP(&q.Repeats, "repeats", "r", 1, "samples of every case, in a fair order (compare wants 4 or more)")
	f.StringVarP(&q.out, "out", "o", "", "write the results file (JSON Lines: header, one line per sample, footer with a SHA-256)")
	f.BoolVar(&q.force, "force", false, "replace an existing -o file")
	f.BoolVar(&q.resume, "resume", false, "continue the partial -o file of an interrupted run (its recorded settings, not these flags)")
	f.BoolVar(&q.resumeChanged, "resume-changed", false, "with --resume: resume although a target's binary, version or settings changed")
	f.BoolVar(&q.json, "json", false, "print the results file (JSON Lines) on stdout instead of tables")
	f.Float64VarP(&q.Rate, "rate", "R", 0, "constant arrival rate in requests per second across all connections (open loop)")
	f.StringVar(&q.Arrival, "arrival", "constant", "arrivals in rate mode: constant or poisson")
	f.Uint64Var(&q.Seed, "seed", 1, "seed of the run's pseudo-random choices (poisson arrivals, key orders)")
	f.IntVar(&q.MaxBacklog, "max-backlog", 0, "due requests that may wait for a free connection before sends are dropped (default rate × 1 s)")
	f.BoolVar(&q.failUnhealthy, "fail-unhealthy", false, "exit with code 3 when a sample is UNHEALTHY")
	f.BoolVar(&q.noCalibrate, "no-calibrate", false, "do not measure benchrig's own floor (latency and CPU per request against a null peer, ≤ 1 s) before the first sample")
	durationVarP(f, &q.MaxP99, "max-p99", "", 250*time.Millisecond, "health threshold: largest acceptable p99 (corrected in rate mode)")
	f.Float64Var(&q.MinCoverage, "min-coverage", 95, "health threshold: least target coverage in percent (rate mode)")

	f.StringVar(&q.TargetCPUs, "target-cpus", "", "pin the server benchrig starts (--target, --ephemeral) to this CPU list (e.g. 0)")
	f.StringVar(&q.TargetCPUs, "server-cpus", "", "the same as --target-cpus")
	_ = f.MarkHidden("server-cpus")
	f.StringVar(&q.ClientCPUs, "client-cpus", "", "pin benchrig's load generation to this CPU list (GOMAXPROCS follows)")
	durationVarP(f, &q.Interval, "sample-interval", "", time.Second, "server resource sampling period (≥ 100ms)")
	f.BoolVar(&q.NoPSS, "no-pss", false, "do not read the server's PSS (RSS only): each reading of a big multi-process server costs the client CPU")
	durationVarP(f, &q.Baseline, "baseline", "", 0, "idle phase sampled before the load")
	durationVarP(f, &q.Settle, "settle", "", 0, "idle phase between warm-up and load")
	durationVarP(f, &q.Recovery, "recovery", "", 0, "idle phase sampled after the load")
	q.Changed = f.Changed
}

// options checks the flags that are not the suite's: where results go.
func (q *quickFlags) options() error {
	if q.resume && q.force {
		return exitcode.Usagef("give --resume or --force, not both")
	}
	if q.resume && q.out == "" {
		return exitcode.Usagef("--resume needs -o/--out: the results file to continue")
	}
	return nil
}

// quickJob is one quick run: its suite and how to show its result.
type quickJob struct {
	// name is the command ("benchrig http"), recorded as the suite's file.
	name string
	doc  quick.Doc
	// env holds variables the run reads in place of the process
	// environment's (a DSN the suite reads through dsn_env); they are never
	// set in the environment, so no child sees them.
	env  map[string]string
	args []string
	// title names a single-sample run's report.
	title func(s *result.Sample) string
	// heading is the first line above a matrix of several samples.
	heading func(n int) string
	// onPrepared is told the targets' provenance (a version line).
	onPrepared func(prov map[string]result.Provenance)
}

// runQuick runs a quick job through the Runner, prints its report (the
// full terminal report for one sample, the comparison matrix for several,
// or the results file with --json) and maps the samples to the exit code.
func runQuick(a *app, q *quickFlags, job quickJob) error {
	ctx, stdout, stderr := a.ctx, a.stdout, a.stderr
	s, p, err := quick.Plan(job.name, job.doc)
	if err != nil {
		return exitcode.Usage(err)
	}
	x := execution{file: job.name, args: job.args, secrets: a.secrets, secretHeaders: a.secretHeaders, secretParams: a.secretParams, out: output{path: q.out, force: q.force, resume: q.resume || q.resumeChanged, resumeChanged: q.resumeChanged, json: q.json},
		progress: !q.json && len(p.Samples) > 1, onPrepared: job.onPrepared, noCalibrate: q.noCalibrate, env: job.env}
	if !q.json {
		x.notes = func(format string, args ...any) { fmt.Fprintf(stderr, format, args...) }
		if len(p.Samples) > 1 {
			fmt.Fprintf(stderr, "%s (%s × %s), about %s\n", plural(len(p.Samples), "sample"), plural(len(p.Cells), "case"),
				plural(p.Repeats, "repeat"), p.Estimate(p.Startup).Round(time.Second))
		}
	}
	res, err := x.execute(ctx, s, p, stdout, stderr)
	if err != nil {
		return err
	}
	scrubRecord(res.partial, a.secrets)
	if !q.json {
		switch {
		case len(res.plan.Samples) == 1 && (len(res.samples) == 1 || res.partial != nil):
			smp := res.partial
			if len(res.samples) == 1 {
				smp = res.samples[0]
			}
			if err := report.Terminal(stdout, smp, report.TerminalOptions{Title: job.title(smp), ShowVerdict: q.failUnhealthy || smp.Server != nil, Floor: res.floor}); err != nil {
				return err
			}
		case len(res.samples) > 0:
			fmt.Fprintf(stdout, "%s\n\n", job.heading(len(res.samples)))
			rows := make([]report.Row, len(res.samples))
			for i, smp := range res.samples {
				rows[i] = report.Row{Case: smp.Case, Variant: smp.Variant, Sample: smp}
			}
			if err := report.Matrix(stdout, rows); err != nil {
				return err
			}
			if line := report.FloorLine(res.floor); line != "" {
				fmt.Fprintf(stdout, "\n%s\n", line)
			}
		}
		if res.path != "" {
			fmt.Fprintf(stdout, "\nResult written to %s\n", res.path)
		}
	}
	return samplesExit(res, q.failUnhealthy, stderr)
}

// samplesExit maps a run's samples to the error that sets the exit code,
// the same for `run` and every quick mode (README, "Exit codes"): 1 when
// every sample failed or the run was interrupted (Ctrl-C: the plan did not
// run to its end); 3 with --fail-unhealthy when some sample was UNHEALTHY
// or failed; else nil (0), failed samples and samples cut short then named
// on stderr. A sample whose window was cut short by its target's death is
// in the file like any other: it is UNHEALTHY, the run is not interrupted.
func samplesExit(res *executed, failUnhealthy bool, stderr io.Writer) error {
	failed, unhealthy, cut, first, firstCut := 0, 0, 0, "", ""
	for _, s := range res.samples {
		if s.Error != "" {
			if failed++; first == "" {
				first = s.Error
			}
		}
		if !s.Verdict.Healthy {
			unhealthy++
		}
		if s.Error == "" && s.Load != nil && s.Load.Interrupted {
			if cut++; firstCut == "" {
				firstCut = s.Key + ": " + strings.Join(s.Verdict.Reasons, "; ")
			}
		}
	}
	n := len(res.samples)
	switch {
	case res.interrupted && n == 0 && res.partial != nil && res.partial.Load != nil:
		msg := fmt.Sprintf("interrupted: the figures above cover the %.1f s that ran", res.partial.Load.Seconds)
		if res.path != "" {
			msg += fmt.Sprintf("; %s holds no sample yet (--resume measures it again)", res.path)
		}
		return errors.New(msg)
	case res.interrupted:
		return fmt.Errorf("interrupted: %d of %d samples ran; the figures above cover what finished", n, len(res.plan.Samples))
	case failed == 1 && n == 1:
		return errors.New(first)
	case failed > 0 && failed == n:
		return fmt.Errorf("all %d samples failed; the first: %s", n, first)
	case failUnhealthy && unhealthy > 0:
		if failed > 0 {
			return fmt.Errorf("%w: %d of %d samples UNHEALTHY, %d of them failed; the first: %s", exitcode.ErrUnhealthy, unhealthy, n, failed, first)
		}
		return fmt.Errorf("%w: %d of %d samples", exitcode.ErrUnhealthy, unhealthy, n)
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "benchrig: %d of %d samples failed (exit 0; --fail-unhealthy exits 3); the first: %s\n", failed, n, first)
	}
	if cut > 0 {
		fmt.Fprintf(stderr, "benchrig: %d of %d samples UNHEALTHY with their load window cut short (exit 0; --fail-unhealthy exits 3); the first: %s\n", cut, n, firstCut)
	}
	return nil
}

// plural writes "1 case", "2 cases".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// describeWindow says how the load window is bounded and driven:
// "5s · closed loop", "10s · 1000 req/s (constant arrivals) · warm-up 15s".
func describeWindow(s *result.Sample) string {
	var parts []string
	c := s.Config
	if c == nil {
		return ""
	}
	if c.Phases.Load > 0 {
		parts = append(parts, c.Phases.Load.String())
	}
	if c.Phases.Requests > 0 {
		parts = append(parts, fmt.Sprintf("%d requests", c.Phases.Requests))
	}
	if e := c.Engine; e.Rate > 0 {
		arr := e.Arrival
		if arr == "" {
			arr = "constant"
		}
		parts = append(parts, fmt.Sprintf("%v req/s (%s arrivals)", e.Rate, arr))
	} else {
		mode := "closed loop"
		if e.Pipeline > 1 {
			mode += fmt.Sprintf(", pipeline %d", e.Pipeline)
		}
		parts = append(parts, mode)
	}
	if c.Phases.Warmup > 0 {
		parts = append(parts, "warm-up "+c.Phases.Warmup.String())
	}
	return strings.Join(parts, " · ")
}
