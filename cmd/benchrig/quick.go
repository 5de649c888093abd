package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
)

// The quick modes (benchrig http|pg|resp) are suites of one target: their
// flags build an in-memory suite (quickSuite), which runs through the same
// Runner, fair order, phases, verdicts and results file as `benchrig run`.

func toolInfo() result.Tool {
	t := result.ReadTool(version)
	if commit != "" {
		t.Commit, t.Dirty = strings.TrimSuffix(commit, "-dirty"), strings.HasSuffix(commit, "-dirty")
	}
	return t
}

// quickFlags are the flags every quick mode shares, under the names a suite
// uses for the same things.
type quickFlags struct {
	conns, pipelines intList
	duration         time.Duration
	requests         int64
	warmup           time.Duration
	repeats          int
	out              string
	force, resume    bool
	json             bool

	rate          float64
	arrival       string
	seed          uint64
	maxBacklog    int
	failUnhealthy bool
	maxP99        time.Duration
	minCoverage   float64

	// the server side
	targetCPUs string
	clientCPUs string
	interval   time.Duration
	noPSS      bool
	baseline   time.Duration
	settle     time.Duration
	recovery   time.Duration
}

func (q *quickFlags) register(c *cobra.Command, defaultConns int) {
	f := c.Flags()
	q.conns = intList{v: []int{defaultConns}}
	q.pipelines = intList{v: []int{1}}
	f.VarP(&q.conns, "connections", "c", "connections (workers); a list such as 4,64 runs one case per value (default 32 with --rate)")
	f.VarP(&q.pipelines, "pipeline", "p", "requests in flight per connection (closed loop); a list runs one case per value")
	durationVarP(f, &q.duration, "duration", "d", 10*time.Second, "length of the recorded load window")
	f.Int64VarP(&q.requests, "requests", "n", 0, "stop after this many requests (alone: no duration bound)")
	durationVarP(f, &q.warmup, "warmup", "", 0, "load run before the window and not recorded")
	f.IntVarP(&q.repeats, "repeats", "r", 1, "samples of every case, in a fair order (compare wants 4 or more)")
	f.StringVarP(&q.out, "out", "o", "", "write the results file (JSON Lines: header, one line per sample, footer with a SHA-256)")
	f.BoolVar(&q.force, "force", false, "replace an existing -o file")
	f.BoolVar(&q.resume, "resume", false, "continue the partial -o file of an interrupted run (its recorded settings, not these flags)")
	f.BoolVar(&q.json, "json", false, "print the results file (JSON Lines) on stdout instead of tables")
	f.Float64VarP(&q.rate, "rate", "R", 0, "constant arrival rate in requests per second across all connections (open loop)")
	f.StringVar(&q.arrival, "arrival", "constant", "arrivals in rate mode: constant or poisson")
	f.Uint64Var(&q.seed, "seed", 1, "seed of the run's pseudo-random choices (poisson arrivals, key orders)")
	f.IntVar(&q.maxBacklog, "max-backlog", 0, "due requests that may wait for a free connection before sends are dropped (default rate × 1 s)")
	f.BoolVar(&q.failUnhealthy, "fail-unhealthy", false, "exit with code 3 when a sample is UNHEALTHY")
	f.DurationVar(&q.maxP99, "max-p99", 250*time.Millisecond, "health threshold: largest acceptable p99 (corrected in rate mode)")
	f.Float64Var(&q.minCoverage, "min-coverage", 95, "health threshold: least target coverage in percent (rate mode)")

	f.StringVar(&q.targetCPUs, "target-cpus", "", "pin the server benchrig starts (--target, --ephemeral) to this CPU list (e.g. 0)")
	f.StringVar(&q.targetCPUs, "server-cpus", "", "the same as --target-cpus")
	_ = f.MarkHidden("server-cpus")
	f.StringVar(&q.clientCPUs, "client-cpus", "", "pin benchrig's load generation to this CPU list (GOMAXPROCS follows)")
	durationVarP(f, &q.interval, "sample-interval", "", time.Second, "server resource sampling period (≥ 100ms)")
	f.BoolVar(&q.noPSS, "no-pss", false, "do not read the server's PSS (RSS only): each reading of a big multi-process server costs the client CPU")
	durationVarP(f, &q.baseline, "baseline", "", 0, "idle phase sampled before the load")
	durationVarP(f, &q.settle, "settle", "", 0, "idle phase between warm-up and load")
	durationVarP(f, &q.recovery, "recovery", "", 0, "idle phase sampled after the load")
}

// quickPhases are a mode's default phases; the flags override them.
type quickPhases struct{ baseline, warmup, settle, recovery time.Duration }

// validate checks the shared flags: bad input is a usage error naming the
// flag and what it accepts.
func (q *quickFlags) validate(c *cobra.Command) error {
	f := c.Flags()
	if q.resume && q.force {
		return usagef("give --resume or --force, not both")
	}
	if q.resume && q.out == "" {
		return usagef("--resume needs -o/--out: the results file to continue")
	}
	if f.Changed("rate") && (!(q.rate > 0) || math.IsInf(q.rate, 0)) {
		return usagef("--rate must be > 0 requests per second, got %v", q.rate)
	}
	if f.Changed("duration") && q.duration <= 0 {
		return usagef("--duration must be > 0 (e.g. 10s, 500ms), got %s", q.duration)
	}
	if q.requests < 0 || f.Changed("requests") && q.requests == 0 {
		return usagef("--requests must be ≥ 1, got %d", q.requests)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"warmup", q.warmup}, {"baseline", q.baseline}, {"settle", q.settle}, {"recovery", q.recovery}} {
		if d.v < 0 {
			return usagef("--%s must be ≥ 0, got %s", d.name, d.v)
		}
	}
	if f.Changed("max-backlog") && q.maxBacklog < 1 {
		return usagef("--max-backlog must be ≥ 1, got %d", q.maxBacklog)
	}
	if q.rate == 0 && (f.Changed("arrival") || f.Changed("max-backlog")) {
		return usagef("--arrival and --max-backlog need --rate")
	}
	if q.rate > 0 && f.Changed("requests") && f.Changed("duration") {
		if want := q.rate * q.duration.Seconds(); math.Abs(float64(q.requests)-want) >= 1 {
			return usagef("--requests %d contradicts --rate %v × --duration %s = %.0f requests: give --duration or --requests, not both",
				q.requests, q.rate, q.duration, want)
		}
	}
	return nil
}

// doc is the in-memory suite being built, as the suite file would hold it.
type doc map[string]any

// suite returns the suite document of the shared flags: name, repeats,
// bounds, phases (def, then the flags), thresholds, sampler, placement and
// the matrix axes. The mode adds targets, paths, workloads and cases.
func (q *quickFlags) suite(c *cobra.Command, name string, def quickPhases) doc {
	f := c.Flags()
	ph := def
	for _, o := range []struct {
		flag string
		v    time.Duration
		dst  *time.Duration
	}{{"baseline", q.baseline, &ph.baseline}, {"warmup", q.warmup, &ph.warmup}, {"settle", q.settle, &ph.settle}, {"recovery", q.recovery, &ph.recovery}} {
		if f.Changed(o.flag) {
			*o.dst = o.v
		}
	}
	load := q.duration
	if q.requests > 0 && !f.Changed("duration") {
		load = 0 // a count alone bounds the window
	}
	d := doc{
		"name":    name,
		"seed":    q.seed,
		"repeats": q.repeats,
		"phases": doc{"baseline": ph.baseline.String(), "warmup": ph.warmup.String(), "settle": ph.settle.String(),
			"load": load.String(), "recovery": ph.recovery.String()},
		"thresholds": doc{"coverage": q.minCoverage, "p99": q.maxP99.String()},
		"sampler":    doc{"interval": q.interval.String(), "no_pss": q.noPSS},
	}
	if q.requests > 0 {
		d["requests"] = q.requests
	}
	pl := doc{}
	if q.clientCPUs != "" {
		pl["client_cpus"] = q.clientCPUs
	}
	if q.targetCPUs != "" {
		pl["target_cpus"] = q.targetCPUs
	}
	d["placement"] = pl
	conns := q.conns.v
	if q.rate > 0 && !f.Changed("connections") {
		conns = []int{32}
	}
	m := doc{"connections": conns, "pipeline": q.pipelines.v}
	if q.rate > 0 {
		m["rates"] = []float64{q.rate}
		d["arrival"] = q.arrival
		if q.maxBacklog > 0 {
			d["max_backlog"] = q.maxBacklog
		}
	}
	d["matrix"] = m
	return d
}

// quickPlan parses the suite document with the suite's own rules and
// expands its plan; a value the suite refuses is reported under the flag
// that set it ("--connections: must be ≥ 1, got 0"), so quick modes and
// suites share one set of bounds.
func quickPlan(name string, d doc) (*suite.Suite, *suite.Plan, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, nil, err
	}
	s, err := suite.Parse(name, b)
	if err != nil {
		return nil, nil, usageError{flagErrors(err)}
	}
	p, err := s.Plan()
	if err != nil {
		return nil, nil, usageError{flagErrors(err)}
	}
	return s, p, nil
}

// suiteFlags names the flag that fills each field of a quick mode's suite,
// by field prefix (the longest match wins).
var suiteFlags = map[string]string{
	"repeats": "--repeats", "requests": "--requests", "seed": "--seed", "arrival": "--arrival", "max_backlog": "--max-backlog",
	"phases.load": "--duration", "phases.warmup": "--warmup", "phases.baseline": "--baseline", "phases.settle": "--settle",
	"phases.recovery": "--recovery", "thresholds.coverage": "--min-coverage", "thresholds.p99": "--max-p99",
	"sampler.interval": "--sample-interval", "placement.client_cpus": "--client-cpus", "placement.target_cpus": "--target-cpus",
	"matrix.connections": "--connections", "matrix.pipeline": "--pipeline", "matrix.rates": "--rate", "matrix.batches": "--batch",
	"paths.request.http.url": "URL", "paths.request.http.method": "--method", "paths.request.http.headers": "--header",
	"paths.request.http.expect_status": "--expect-status", "paths.request.http.timeout": "--timeout",
}

// flagErrors rewrites the errors of a quick mode's suite in the words of
// its flags; a field no flag fills keeps its suite name.
func flagErrors(err error) error {
	var es suite.Errors
	if !errors.As(err, &es) {
		return err
	}
	lines := make([]string, 0, len(es))
	for _, e := range es {
		flag, best := "", -1
		for prefix, f := range suiteFlags {
			if (e.Field == prefix || strings.HasPrefix(e.Field, prefix+".") || strings.HasPrefix(e.Field, prefix+"[")) && len(prefix) > best {
				flag, best = f, len(prefix)
			}
		}
		if flag == "" {
			flag = e.Field
		}
		lines = append(lines, flag+": "+e.Msg)
	}
	return errors.New(strings.Join(lines, "; "))
}

// quickJob is one quick run: its suite and how to show its result.
type quickJob struct {
	// name is the command ("benchrig http"), recorded as the suite's file.
	name string
	doc  doc
	args []string
	// title names a single-sample run's report.
	title func(s *result.Sample) string
	// heading is the first line above a matrix of several samples.
	heading func(n int) string
	// onPrepared is told the targets' provenance (a version line).
	onPrepared func(prov map[string]result.Provenance)
	// scrub removes a secret from a sample's texts (the last line of
	// defence: drivers already hide it).
	scrub func(s *result.Sample)
}

// runQuick runs a quick job through the Runner, prints its report (the
// full terminal report for one sample, the comparison matrix for several,
// or the results file with --json) and maps the samples to the exit code.
func runQuick(ctx context.Context, q *quickFlags, job quickJob, stdout, stderr io.Writer) error {
	s, p, err := quickPlan(job.name, job.doc)
	if err != nil {
		return err
	}
	x := execution{file: job.name, args: job.args, out: output{path: q.out, force: q.force, resume: q.resume, json: q.json},
		progress: !q.json && len(p.Samples) > 1, onPrepared: job.onPrepared}
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
	if job.scrub != nil {
		for _, smp := range res.samples {
			job.scrub(smp)
		}
	}
	if !q.json {
		switch {
		case len(res.plan.Samples) == 1 && (len(res.samples) == 1 || res.partial != nil):
			smp := res.partial
			if len(res.samples) == 1 {
				smp = res.samples[0]
			}
			if err := report.Terminal(stdout, smp, report.TerminalOptions{Title: job.title(smp), ShowVerdict: q.failUnhealthy || smp.Server != nil}); err != nil {
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
		}
		if res.path != "" {
			fmt.Fprintf(stdout, "\nResult written to %s\n", res.path)
		}
	}
	return samplesExit(res, q.failUnhealthy, stderr)
}

// samplesExit maps a run's samples to the error that sets the exit code,
// the same for `run` and every quick mode (README, "Exit codes"): 1 when
// every sample failed or the run was interrupted; 3 with --fail-unhealthy
// when some sample was UNHEALTHY or failed; else nil (0), failed samples
// then named on stderr.
func samplesExit(res *executed, failUnhealthy bool, stderr io.Writer) error {
	failed, unhealthy, first := 0, 0, ""
	interrupted := res.interrupted
	for _, s := range res.samples {
		if s.Error != "" {
			if failed++; first == "" {
				first = s.Error
			}
		}
		if !s.Verdict.Healthy {
			unhealthy++
		}
		if s.Load != nil && s.Load.Interrupted {
			interrupted = true
		}
	}
	n := len(res.samples)
	switch {
	case interrupted && n == 0 && res.partial != nil && res.partial.Load != nil:
		msg := fmt.Sprintf("interrupted: the figures above cover the %.1f s that ran", res.partial.Load.Seconds)
		if res.path != "" {
			msg += fmt.Sprintf("; %s holds no sample yet (--resume measures it again)", res.path)
		}
		return errors.New(msg)
	case interrupted:
		return fmt.Errorf("interrupted: %d of %d samples ran; the figures above cover what finished", n, len(res.plan.Samples))
	case failed == 1 && n == 1:
		return errors.New(first)
	case failed > 0 && failed == n:
		return fmt.Errorf("all %d samples failed; the first: %s", n, first)
	case failUnhealthy && unhealthy > 0:
		if failed > 0 {
			return fmt.Errorf("%w: %d of %d samples UNHEALTHY, %d of them failed; the first: %s", errUnhealthy, unhealthy, n, failed, first)
		}
		return fmt.Errorf("%w: %d of %d samples", errUnhealthy, unhealthy, n)
	case failed > 0:
		fmt.Fprintf(stderr, "benchrig: %d of %d samples failed (exit 0; --fail-unhealthy exits 3); the first: %s\n", failed, n, first)
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

// redactArgs returns the command line with the values of secret headers
// (-H 'Authorization: …') replaced, for recording.
func redactArgs(args []string, isSecret func(name string) bool, redacted string) []string {
	out := append([]string(nil), args...)
	redact := func(h string) string {
		if k, _, ok := strings.Cut(h, ":"); ok && isSecret(k) {
			return k + ": " + redacted
		}
		return h
	}
	for i := 0; i < len(out); i++ {
		a := out[i]
		switch {
		case (a == "-H" || a == "--header") && i+1 < len(out):
			out[i+1] = redact(out[i+1])
			i++
		case strings.HasPrefix(a, "--header="):
			out[i] = "--header=" + redact(strings.TrimPrefix(a, "--header="))
		case strings.HasPrefix(a, "-H") && len(a) > 2:
			out[i] = "-H" + redact(a[2:])
		}
	}
	return out
}
