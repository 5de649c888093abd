package execute

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/capacity"
	"github.com/benchrig/benchrig/internal/floor"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/plan"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/sample"
	"github.com/benchrig/benchrig/internal/status"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/tmpdir"
)

// execution is one run of a plan through the one Runner.
type execution struct {
	// file names the suite in the header: the suite file, or "benchrig
	// http" for a quick mode's in-memory suite.
	file string
	// args is the command line as recorded (secrets redacted).
	args []string
	// creds scrub the header and every sample written, and receive the
	// credentials the suite holds or reads.
	creds Credentials
	// tool is benchrig's version, recorded in the header.
	tool result.Tool
	// secretHeaders and secretParams widen the suite's policy
	// (--secret-header, --secret-param).
	secretHeaders, secretParams []string
	out                         Output
	// progress prints one line per finished sample on stderr.
	progress bool
	// onPrepared is told the targets' provenance once they are ready.
	onPrepared func(prov map[string]result.Provenance)
	// notes receive the systems' progress notes (fills, pre-flights).
	notes func(format string, args ...any)
	// noCalibrate skips measuring benchrig's own floor before the run.
	noCalibrate bool
	// executor, if set, runs the load on agents (run --agents).
	executor run.Executor
	// env holds variables the run reads in place of the process
	// environment's (a quick run's DSN under its dsn_env).
	env map[string]string
	// ui is --ui: a live page of the run.
	ui UI
	// ownProcess: this process serves nothing of its own (run.PlanOptions.OwnProcess).
	ownProcess bool
}

// getenv reads a variable as the run's systems do: x.env first.
func (x *execution) getenv(name string) string {
	if v, ok := x.env[name]; ok {
		return v
	}
	return os.Getenv(name)
}

// executed is what a run produced.
type executed struct {
	plan        *suite.Plan
	samples     []*result.Sample // this run's samples, in run order
	interrupted bool
	// partial is the sample in flight when the run was interrupted: its
	// figures cover what finished; the results file does not hold it.
	partial *result.Sample
	// path is the results file written ("" when none was asked for).
	path string
	// floor is benchrig's own floor measured before the first sample
	// (nil when resuming: the file's header holds the first run's).
	floor *result.Floor
	// searches are a capacity search's results by cell ID, in plan
	// order of cells (nil for a run of set rates).
	searches map[string]capacity.Result
}

// execute runs the plan (or, with --resume, what the results file's
// recorded suite still lacks), appending every sample to the results file
// as it finishes.
func (x execution) execute(ctx context.Context, s *suite.Suite, p *suite.Plan, stdout, stderr io.Writer) (*executed, error) {
	path := x.out.Path
	var (
		w   *result.Writer
		err error
	)
	var hdr *result.Header
	x.out.absentIfHeaderless(stderr)
	if x.out.Resume {
		if w, hdr, err = result.Resume(path); err != nil {
			return nil, err
		}
		if p, err = x.creds.ResumePlan(s, p, hdr, stderr); err != nil {
			w.Abandon()
			return nil, fmt.Errorf("%s: the recorded suite: %w", path, err)
		}
		s = p.Suite
		fmt.Fprintf(stderr, "Resuming %s: %d of %d samples already recorded\n", path, countDone(w, p), len(p.Samples))
	} else if path != "" && !x.out.Force && !x.out.replace {
		if _, err := os.Stat(path); err == nil {
			return nil, fmt.Errorf("%s: %w (use --resume to continue a partial file, --force to replace it, or another -o)", path, result.ErrExists)
		}
	}
	if path == "" && x.out.JSON {
		dir, err := tmpdir.New("", "results")
		if err != nil {
			return nil, err
		}
		defer tmpdir.Remove(dir)
		path = dir + "/results.json"
	}
	if s != nil {
		s.SecretHeaders = append(s.SecretHeaders, x.secretHeaders...)
		s.SecretParams = append(s.SecretParams, x.secretParams...)
		x.creds.Collect(s, x.getenv)
	}
	st := status.New(stderr, "")
	defer st.Stop()
	var page *livePage
	if x.ui.On {
		if page, err = startLive(x.ui, x.file, p, stderr); err != nil {
			if w != nil {
				w.Abandon()
			}
			return nil, err
		}
		if hdr != nil { // a resumed run: the samples already in the file are finished
			if c, err := result.Check(path, nil); err == nil {
				for i := range c.Samples {
					page.finished(&c.Samples[i])
				}
			}
		}
		defer func() {
			if page != nil {
				page.finish(ctx, UI{}, "", false)
			}
		}()
	}
	ran := &ranCheck{ref: map[string][]result.RanFile{}, resuming: hdr != nil, accept: x.out.ResumeChanged, path: path, stderr: stderr}
	if hdr != nil {
		ran.recorded(path)
	}
	done := &run.Memory{}
	var partial *result.Sample
	r := run.NewRunner(p, run.PlanOptions{
		OwnProcess: x.ownProcess,
		OnProgress: func(pr run.Progress) {
			prefix := fmt.Sprintf("[%d/%d] ", pr.Index, pr.Total)
			if pr.Total > 1 {
				prefix += fmt.Sprintf("%s · ETA %s · ", pr.Key, pr.ETA.Round(time.Second))
			}
			st.SetPrefix(prefix)
			st.SetPhase(pr.Phase, pr.PhasePlanned)
			if page != nil {
				page.progress(pr)
			}
		},
		OnEngine: func(e load.Watched) {
			st.SetEngine(e)
			if page != nil {
				page.setEngine(e)
			}
		},
		OnSampler: func(s *sample.Sampler) {
			if page != nil {
				page.setSampler(s)
			}
		},
		OnSample: func(i, n int, smp *result.Sample, eta time.Duration) {
			x.creds.ScrubSample(smp)
			done.Append(smp)
			if page != nil {
				page.finished(smp)
			}
			if x.progress {
				clear := ""
				if status.IsTerminal(stderr) {
					clear = "\r\033[K"
				}
				fmt.Fprintln(stderr, clear+status.ProgressLine(i, n, smp, eta))
			}
		},
		Notes:         x.notes,
		Env:           x.env,
		OnInterrupted: func(smp *result.Sample) { partial = smp },
		Executor:      x.executor,
		CheckRan:      ran.check,
	})
	defer r.Close()
	prov, err := r.Prepare(ctx)
	if err != nil {
		if w != nil {
			w.Abandon()
		}
		return nil, err
	}
	changed := &ran.changed // what a --resume-changed run resumes against
	if hdr != nil {
		if ch := result.ProvenanceChanges(*hdr, result.Header{Suite: hdr.Suite, Targets: prov}); len(ch) > 0 {
			if !x.out.ResumeChanged {
				w.Abandon()
				return nil, fmt.Errorf("%s was measured against other targets than these (%s): refusing to resume; --resume-changed resumes anyway, or start a new file", path, strings.Join(ch, "; "))
			}
			fmt.Fprintf(stderr, "benchrig: resuming against changed targets (--resume-changed): %s\n", strings.Join(ch, "; "))
			*changed = ch
		}
	}
	for name, pv := range prov {
		x.creds.ScrubProvenance(&pv)
		prov[name] = pv
	}
	if x.onPrepared != nil {
		x.onPrepared(prov)
	}
	var measured *result.Floor
	if hdr == nil {
		var notes io.Writer
		if x.notes != nil {
			notes = stderr
		}
		measured = floor.BeforeRun(ctx, p, x.noCalibrate, x.ownProcess, notes)
	}
	var sink run.Sink = &run.Memory{}
	if w == nil && path != "" {
		resolved, err := s.Resolved()
		if err != nil {
			return nil, err
		}
		var overrides []string
		for _, o := range s.Overrides {
			overrides = append(overrides, o.From+":"+o.Name+"="+o.Value)
		}
		h := result.Header{Tool: x.tool, Host: result.ReadHost(), Started: time.Now().UTC(), Args: x.args, Smoke: p.IsSmoke,
			Suite: result.SuiteInfo{Name: s.Name, File: x.file, SHA256: s.SHA256(), Resolved: resolved, Overrides: overrides},
			Plan:  plan.Entries(p), Targets: prov, Floor: measured}
		h.Search = searchPlan(p)
		x.creds.ScrubHeader(&h)
		if w, err = result.Create(path, h, x.out.Force || x.out.Path == ""); err != nil {
			return nil, err
		}
	}
	if w != nil {
		sink = w
		if x.out.ResumeChanged {
			sink = changedSink{w, changed}
		}
	}
	sink = x.creds.Sink(sink)
	var (
		interrupted bool
		searches    map[string]capacity.Result
	)
	if p.Search != nil {
		searches, interrupted, err = r.Search(ctx, sink, recordedSteps(path, hdr))
	} else {
		interrupted, err = r.Run(ctx, sink)
	}
	st.Stop()
	if err != nil {
		if w != nil {
			w.Abandon()
		}
		return nil, err
	}
	if w != nil {
		if err := w.Close(interrupted); err != nil {
			return nil, err
		}
	}
	if page != nil {
		pg := page
		page = nil
		file := path
		if w == nil {
			file = ""
		}
		pg.finish(ctx, x.ui, file, true)
	}
	res := &executed{plan: p, samples: done.Samples, interrupted: interrupted, partial: partial, floor: measured, searches: searches}
	if x.out.Path != "" {
		res.path = x.out.Path
	}
	if x.out.JSON {
		if err := catFile(path, stdout); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// catFile copies a file to w.
func catFile(path string, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// changedSink records, in every sample it appends, what had changed in the
// targets' provenance when a run resumed with --resume-changed (at the
// start, or found since in what a target's tree ran): verify and every
// report then say which samples were measured against what.
type changedSink struct {
	*result.Writer
	changed *[]string
}

// Append records the changes in the sample, then appends it.
func (c changedSink) Append(s *result.Sample) error {
	if len(*c.changed) > 0 {
		s.ResumedChanged = slices.Clone(*c.changed)
	}
	return c.Writer.Append(s)
}

// countDone is how many of the plan's samples the file holds.
func countDone(w *result.Writer, p *suite.Plan) int {
	n := 0
	for _, s := range p.Samples {
		if w.Done(s.Key) {
			n++
		}
	}
	return n
}

// recordedSteps are the search steps a resumed file holds, by cell ID
// (nil for a new file).
func recordedSteps(path string, hdr *result.Header) map[string][]capacity.StepResult {
	if hdr == nil || hdr.Search == nil {
		return nil
	}
	c, err := result.Check(path, nil)
	if err != nil {
		return nil
	}
	out := map[string][]capacity.StepResult{}
	for _, cell := range hdr.Search.Cells {
		out[cell] = result.SearchSteps(cell, c.Samples)
	}
	return out
}
