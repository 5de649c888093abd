package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/plan"
	"github.com/benchrig/benchrig/internal/result"
	runner "github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/status"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/tmpdir"
)

// output says where a run's results go: the same JSON Lines results file
// for `benchrig run` and every quick mode.
type output struct {
	// path is -o/--out ("" for a quick run: results kept in a temp file
	// only for --json).
	path          string
	force, resume bool
	// resumeChanged resumes although the targets' provenance changed.
	resumeChanged bool
	// json prints the results file on stdout when the run ends.
	json bool
	// replace is set when path holds no complete header line: a new run
	// replaces it (absentIfHeaderless).
	replace bool
}

// absentIfHeaderless treats a results file with no complete header line
// as absent: the run that wrote it stopped before its header was whole (a
// full disk, a kill), so it holds no sample. It is said once on stderr; a
// plain run then replaces the file without --force, and --resume starts
// afresh instead of refusing it, as it does when there is no file at all.
func (o *output) absentIfHeaderless(stderr io.Writer) {
	if o.path == "" || o.force || o.replace {
		return
	}
	absent, err := result.Headerless(o.path)
	if errors.Is(err, os.ErrNotExist) && o.resume {
		// killed before the file was made: --resume starts it
		fmt.Fprintf(stderr, "benchrig: %s does not exist: there is nothing to resume; a new run starts\n", o.path)
		o.resume, o.resumeChanged = false, false
		return
	}
	if !absent {
		return
	}
	what := "a new run replaces it"
	if o.resume {
		what = "there is nothing to resume: a new run starts and replaces it"
	}
	fmt.Fprintf(stderr, "benchrig: %s holds no complete header line (the run that wrote it stopped before its header was whole: a full disk? a kill?), so no sample: treated as absent; %s\n", o.path, what)
	o.resume, o.resumeChanged, o.replace = false, false, true
}

// execution is one run of a plan through the one Runner.
type execution struct {
	// file names the suite in the header: the suite file, or "benchrig
	// http" for a quick mode's in-memory suite.
	file string
	// args is the command line as recorded (secrets redacted).
	args []string
	// secrets are scrubbed from the header and every sample written, and
	// receive the credentials the suite holds or reads.
	secrets *secret.Set
	// secretHeaders and secretParams widen the suite's policy
	// (--secret-header, --secret-param).
	secretHeaders, secretParams []string
	out                         output
	// progress prints one line per finished sample on stderr.
	progress bool
	// onPrepared is told the targets' provenance once they are ready.
	onPrepared func(prov map[string]result.Provenance)
	// notes receive the systems' progress notes (fills, pre-flights).
	notes func(format string, args ...any)
	// noCalibrate skips measuring benchrig's own floor before the run.
	noCalibrate bool
	// executor, if set, runs the load on agents (run --agents).
	executor runner.Executor
	// env holds variables the run reads in place of the process
	// environment's (a quick run's DSN under its dsn_env).
	env map[string]string
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
}

// execute runs the plan (or, with --resume, what the results file's
// recorded suite still lacks), appending every sample to the results file
// as it finishes.
func (x execution) execute(ctx context.Context, s *suite.Suite, p *suite.Plan, stdout, stderr io.Writer) (*executed, error) {
	path := x.out.path
	var (
		w   *result.Writer
		err error
	)
	var hdr *result.Header
	x.out.absentIfHeaderless(stderr)
	if x.out.resume {
		if w, hdr, err = result.Resume(path); err != nil {
			return nil, err
		}
		if live := liveResume(s, p, hdr, x.secrets); live != nil {
			p = live // the same suite as recorded, with its real credentials
		} else if p, err = resumePlan(hdr, stderr); err != nil {
			w.Abandon()
			return nil, fmt.Errorf("%s: the recorded suite: %w", path, err)
		}
		s = p.Suite
		fmt.Fprintf(stderr, "Resuming %s: %d of %d samples already recorded\n", path, countDone(w, p), len(p.Samples))
	} else if path != "" && !x.out.force && !x.out.replace {
		if _, err := os.Stat(path); err == nil {
			return nil, fmt.Errorf("%s: %w (use --resume to continue a partial file, --force to replace it, or another -o)", path, result.ErrExists)
		}
	}
	if path == "" && x.out.json {
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
		suiteSecrets(s, x.secrets, x.getenv)
	}
	st := status.New(stderr, "")
	defer st.Stop()
	ran := &ranCheck{ref: map[string][]result.RanFile{}, resuming: hdr != nil, accept: x.out.resumeChanged, path: path, stderr: stderr}
	if hdr != nil {
		ran.recorded(path)
	}
	done := &runner.Memory{}
	var partial *result.Sample
	r := runner.NewRunner(p, runner.PlanOptions{
		OnProgress: func(pr runner.Progress) {
			prefix := fmt.Sprintf("[%d/%d] ", pr.Index, pr.Total)
			if pr.Total > 1 {
				prefix += fmt.Sprintf("%s · ETA %s · ", pr.Key, pr.ETA.Round(time.Second))
			}
			st.SetPrefix(prefix)
			st.SetPhase(pr.Phase, pr.PhasePlanned)
		},
		OnEngine: st.SetEngine,
		OnSample: func(i, n int, smp *result.Sample, eta time.Duration) {
			scrubRecord(smp, x.secrets)
			done.Append(smp)
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
			if !x.out.resumeChanged {
				w.Abandon()
				return nil, fmt.Errorf("%s was measured against other targets than these (%s): refusing to resume; --resume-changed resumes anyway, or start a new file", path, strings.Join(ch, "; "))
			}
			fmt.Fprintf(stderr, "benchrig: resuming against changed targets (--resume-changed): %s\n", strings.Join(ch, "; "))
			*changed = ch
		}
	}
	for name, pv := range prov {
		scrubRecord(&pv, x.secrets)
		prov[name] = pv
	}
	if x.onPrepared != nil {
		x.onPrepared(prov)
	}
	var floor *result.Floor
	if hdr == nil {
		var notes io.Writer
		if x.notes != nil {
			notes = stderr
		}
		floor = runFloor(ctx, p, x.noCalibrate, notes)
	}
	var sink runner.Sink = &runner.Memory{}
	if w == nil && path != "" {
		resolved, err := s.Resolved()
		if err != nil {
			return nil, err
		}
		var overrides []string
		for _, o := range s.Overrides {
			overrides = append(overrides, o.From+":"+o.Name+"="+o.Value)
		}
		h := result.Header{Tool: toolInfo(), Host: result.ReadHost(), Started: time.Now().UTC(), Args: x.args, Smoke: p.IsSmoke,
			Suite: result.SuiteInfo{Name: s.Name, File: x.file, SHA256: s.SHA256(), Resolved: resolved, Overrides: overrides},
			Plan:  plan.Entries(p), Targets: prov, Floor: floor}
		scrubRecord(&h, x.secrets)
		if w, err = result.Create(path, h, x.out.force || x.out.path == ""); err != nil {
			return nil, err
		}
	}
	if w != nil {
		sink = w
		if x.out.resumeChanged {
			sink = changedSink{w, changed}
		}
	}
	sink = scrubSink{next: sink, set: x.secrets}
	interrupted, err := r.Run(ctx, sink)
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
	res := &executed{plan: p, samples: done.Samples, interrupted: interrupted, partial: partial, floor: floor}
	if x.out.path != "" {
		res.path = x.out.path
	}
	if x.out.json {
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

// repeatSuffix names the repeat when there are several.
func repeatSuffix(r, n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" · repeat %d/%d", r, n)
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

// ranCheck compares what each started target's process tree ran (a
// sample's target.ran) with the first record of it: the results file's
// samples when resuming, else this run's first sample of that target. A
// file that ran with other bytes (a server rebuilt behind the wrapper
// script the suite names) refuses the sample and stops the run, unless
// --resume-changed accepts it (then the samples say so).
type ranCheck struct {
	ref      map[string][]result.RanFile
	resuming bool
	accept   bool
	path     string
	stderr   io.Writer
	changed  []string
}

// recorded takes the references from the samples of the results file at
// path: the first sample of each target that recorded what it ran.
func (c *ranCheck) recorded(path string) {
	_, samples, _, _ := result.ReadFile(path)
	for _, s := range samples {
		if t := s.Target; t != nil && len(t.Ran) > 0 {
			if _, ok := c.ref[t.Name]; !ok {
				c.ref[t.Name] = t.Ran
			}
		}
	}
}

// check is the runner's CheckRan.
func (c *ranCheck) check(variant string, ran []result.RanFile) error {
	old, ok := c.ref[variant]
	if !ok || len(old) == 0 {
		c.ref[variant] = ran
		return nil
	}
	ch := result.RanChanges(variant, old, ran)
	if len(ch) == 0 {
		return nil
	}
	list := strings.Join(ch, "; ")
	switch {
	case c.accept:
		fmt.Fprintf(c.stderr, "benchrig: resuming against changed targets (--resume-changed): %s\n", list)
		for _, l := range ch {
			if !slices.Contains(c.changed, l) {
				c.changed = append(c.changed, l)
			}
		}
		c.ref[variant] = ran
		return nil
	case c.resuming:
		return fmt.Errorf("%s was measured against other targets than these (%s): refusing to resume; --resume-changed resumes anyway, or start a new file", c.path, list)
	}
	where := "the run"
	if c.path != "" {
		where = c.path
	}
	return fmt.Errorf("what a target runs changed during the run (%s): stopped; %s keeps the samples measured before, and --resume continues only with --resume-changed", list, where)
}
