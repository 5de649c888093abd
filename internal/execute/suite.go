package execute

import (
	"fmt"
	"time"

	"github.com/benchrig/benchrig/internal/agent/k8s"
	"github.com/benchrig/benchrig/internal/agent/launch"
	"github.com/benchrig/benchrig/internal/plan"
	"github.com/benchrig/benchrig/internal/reportsrc"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
)

// execution is a run of this invocation's: the suite file (or quick
// mode) it names, its results going to out.
func (inv *Invocation) execution(file string, out Output) execution {
	return execution{file: file, args: inv.Args, out: out, creds: inv.Credentials, tool: inv.Tool,
		secretHeaders: inv.SecretHeaders, secretParams: inv.SecretParams, ui: inv.UI,
		ownProcess: inv.OwnProcess}
}

// RunSuite is `benchrig run PATH`: the suite's plan (or, with --resume,
// what the results file's recorded suite still lacks) run to out, on
// agents when asked, then the file's report; the samples make the exit
// code.
func (inv *Invocation) RunSuite(path string, out Output, sets []string, smoke, failUnhealthy, noCalibrate bool, agents launch.Options) error {
	var (
		s   *suite.Suite
		p   *suite.Plan
		err error
	)
	out.absentIfHeaderless(inv.Stderr)
	if !out.Resume {
		if s, p, err = plan.Load(path, sets, smoke); err != nil {
			return err
		}
		if p.Search != nil {
			steps, d := p.SearchWorstCase(p.Startup)
			fmt.Fprintf(inv.Stderr, "Preparing the targets of %d cells, each searched for its capacity (at most %d steps, %s)…\n", len(p.Cells), steps, d.Round(time.Second))
		} else {
			fmt.Fprintf(inv.Stderr, "Preparing the targets of %d cells × %d repeats (%d samples)…\n", len(p.Cells), p.Repeats, len(p.Samples))
		}
	}
	x := inv.execution(path, out)
	x.progress, x.noCalibrate = true, noCalibrate
	x.notes = func(format string, args ...any) { fmt.Fprintf(inv.Stderr, format, args...) }
	if agents.N > 0 {
		isSmoke := p != nil && p.IsSmoke
		resolved, sm, err := resolvedFor(s, out, isSmoke)
		if err != nil {
			return err
		}
		exec, done, err := launch.Coordinator(inv.Ctx, inv.Stderr, agents, resolved, sm)
		if err != nil {
			return err
		}
		defer done()
		x.executor = exec
	}
	res, err := x.execute(inv.Ctx, s, p, inv.Stdout, inv.Stderr)
	if err != nil {
		return err
	}
	if agents.LogResults {
		defer func() {
			if err := k8s.EmitFile(inv.Stdout, out.Path); err != nil {
				fmt.Fprintf(inv.Stderr, "benchrig: --log-results: %v\n", err)
			}
		}()
	}
	if res.interrupted {
		return fmt.Errorf("interrupted: %s holds every finished sample; `benchrig run %s -o %s --resume` continues", out.Path, path, out.Path)
	}
	if res.plan.Search != nil {
		return searchDone(res, false, func(n int) string { return fmt.Sprintf("%s: capacity search, %d steps", res.plan.Name, n) }, inv.Stdout)
	}
	fmt.Fprintf(inv.Stdout, "%d samples written to %s\n\n", len(res.plan.Samples), out.Path)
	if err := reportsrc.ConsoleFile(out.Path, res.plan.IsSmoke, inv.Stdout); err != nil {
		return err
	}
	return samplesExit(res, failUnhealthy, inv.Stderr)
}

// resolvedFor is the resolved suite the agents are sent: the suite's, or
// the one a resumed results file recorded.
func resolvedFor(s *suite.Suite, out Output, smoke bool) ([]byte, bool, error) {
	if out.Resume {
		hdr, _, _, err := result.ReadFile(out.Path)
		if err != nil || hdr == nil {
			return nil, false, fmt.Errorf("%s: read the recorded suite for the agents: %v", out.Path, err)
		}
		return hdr.Suite.Resolved, hdr.Smoke, nil
	}
	b, err := s.Resolved()
	return b, smoke, err
}
