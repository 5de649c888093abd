package execute

import (
	"fmt"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/quick"
	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
)

// Quick is one quick run: its suite, where its results go and how to
// show its result.
type Quick struct {
	// Name is the command ("benchrig http"), recorded as the suite's file.
	Name string
	Doc  quick.Doc
	// Env holds variables the run reads in place of the process
	// environment's (a DSN the suite reads through dsn_env); they are never
	// set in the environment, so no child sees them.
	Env map[string]string
	// Out is where the results go; FailUnhealthy and NoCalibrate are the
	// mode's flags.
	Out                        Output
	FailUnhealthy, NoCalibrate bool
	// Title names a single-sample run's report.
	Title func(s *result.Sample) string
	// Heading is the first line above a matrix of several samples.
	Heading func(n int) string
	// OnPrepared is told the targets' provenance (a version line).
	OnPrepared func(prov map[string]result.Provenance)
}

// RunQuick runs a quick job through the Runner, prints its report (the
// full terminal report for one sample, the comparison matrix for several,
// or the results file with --json) and maps the samples to the exit code.
func (inv *Invocation) RunQuick(job Quick) error {
	ctx, stdout, stderr := inv.Ctx, inv.Stdout, inv.Stderr
	s, p, err := quick.Plan(job.Name, job.Doc)
	if err != nil {
		return exitcode.Usage(err)
	}
	x := inv.execution(job.Name, job.Out)
	x.progress, x.onPrepared, x.noCalibrate, x.env = !job.Out.JSON && len(p.Samples) > 1, job.OnPrepared, job.NoCalibrate, job.Env
	if !job.Out.JSON {
		x.notes = func(format string, args ...any) { fmt.Fprintf(stderr, format, args...) }
		if len(p.Samples) > 1 {
			fmt.Fprintf(stderr, "%s (%s × %s), about %s\n", Plural(len(p.Samples), "sample"), Plural(len(p.Cells), "case"),
				Plural(p.Repeats, "repeat"), p.Estimate(p.Startup).Round(time.Second))
		}
	}
	res, err := x.execute(ctx, s, p, stdout, stderr)
	if err != nil {
		return err
	}
	inv.Credentials.ScrubSample(res.partial)
	if res.plan.Search != nil {
		return searchDone(res, job.Out.JSON, job.Heading, stdout)
	}
	if !job.Out.JSON {
		switch {
		case len(res.plan.Samples) == 1 && (len(res.samples) == 1 || res.partial != nil):
			smp := res.partial
			if len(res.samples) == 1 {
				smp = res.samples[0]
			}
			if err := report.Terminal(stdout, smp, report.TerminalOptions{Title: job.Title(smp), ShowVerdict: job.FailUnhealthy || smp.Server != nil, Floor: res.floor}); err != nil {
				return err
			}
		case len(res.samples) > 0:
			fmt.Fprintf(stdout, "%s\n\n", job.Heading(len(res.samples)))
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
	return samplesExit(res, job.FailUnhealthy, stderr)
}

// Plural writes "1 case", "2 cases".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// DescribeWindow says how the load window is bounded and driven:
// "5s · closed loop", "10s · 1000 req/s (constant arrivals) · warm-up 15s".
func DescribeWindow(s *result.Sample) string {
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
		if e.Pipeline > 1 {
			arr += fmt.Sprintf(" arrivals, up to %d in flight per connection", e.Pipeline)
		} else {
			arr += " arrivals"
		}
		parts = append(parts, fmt.Sprintf("%v req/s (%s)", e.Rate, arr))
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
