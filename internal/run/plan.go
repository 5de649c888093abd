package run

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/capacity"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/sample"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/tmpdir"
)

// Progress is what a long run reports as it goes.
type Progress struct {
	// Index is the 1-based position of the sample in flight; Total the
	// number of samples this run will measure (done ones excluded).
	Index, Total int
	Key          string
	Phase        string
	PhasePlanned time.Duration
	// ETA is the estimated time left for the whole run.
	ETA time.Duration
}

// PlanOptions tune a suite run.
type PlanOptions struct {
	// OnProgress is told about each sample and phase.
	OnProgress func(Progress)
	// OnEngine receives each sample's engine (for a live status line).
	OnEngine func(e load.Watched)
	// OnSampler receives each sample's target sampler (for a live page).
	OnSampler func(s *sample.Sampler)
	// OnSample is told about each sample once it is written: its 1-based
	// position among the samples this run measures, their number, and the
	// estimated time left.
	OnSample func(index, total int, s *result.Sample, eta time.Duration)
	// Notes receives the systems' progress notes (fills, pre-flights).
	// OnInterrupted receives the sample that was in flight when the run
	// was interrupted: its figures cover what finished, and it is not
	// written (a resumed run measures it again).
	Notes         func(format string, args ...any)
	OnInterrupted func(s *result.Sample)
	// Executor, if set, runs each sample's load windows in place of the
	// local engine (a distributed run's agents).
	Executor Executor
	// CheckRan, if set, is told what each started target's process tree
	// runs once it is ready (the sample's target.ran), by target variant
	// (VariantKey). An error refuses the sample: Run stops with it, and
	// the sample is not written.
	CheckRan func(variant string, ran []result.RanFile) error
	// Env holds variables the systems read in place of the process
	// environment's (system.Env.RunEnv).
	Env map[string]string
	// OnSearch, if set, is told each cell's capacity search result as it
	// ends (Runner.Search).
	OnSearch func(cell string, res capacity.Result)
	// OwnProcess says this process serves nothing of its own (benchrig's
	// command, not a test or an embedder with servers beside the load):
	// an unpinned client beside a local target then also takes as many Go
	// Ps as event loops (system.Spec.OwnProcess).
	OwnProcess bool
}

// Sink is where finished samples go: a results file (*result.Writer), or
// memory for a quick run without -o.
type Sink interface {
	// Done reports whether the sink already holds the sample with key.
	Done(key string) bool
	// Append stores a finished sample.
	Append(s *result.Sample) error
}

var _ Sink = (*result.Writer)(nil)

// Memory is a Sink that keeps the samples in memory.
type Memory struct{ Samples []*result.Sample }

// Done implements Sink: a memory sink starts empty.
func (m *Memory) Done(key string) bool { return false }

// Append implements Sink.
func (m *Memory) Append(s *result.Sample) error { m.Samples = append(m.Samples, s); return nil }

// Runner runs a suite's plan: it prepares every target variant's system
// once, then measures every sample in the plan's order, appending each to a
// results file as it finishes. It knows no protocol: each system (package
// system) gives the spec of its samples.
type Runner struct {
	plan   *suite.Plan
	s      *suite.Suite
	opts   PlanOptions
	logDir string
	// systems are the prepared target variants, by variant key, in the
	// order they were prepared.
	systems map[string]system.System
	order   []string
	// procCompanions are the companions found by PID or port, by variant
	// key + "/" + companion name (companions.go).
	procCompanions map[string]system.Companion
}

// NewRunner returns a runner for the plan.
func NewRunner(p *suite.Plan, opts PlanOptions) *Runner {
	return &Runner{plan: p, s: p.Suite, opts: opts, systems: map[string]system.System{}, procCompanions: map[string]system.Companion{}}
}

// VariantKey names a cell's target with its params ("node-http[node=node20]").
func VariantKey(c suite.Cell) string {
	if len(c.Params) == 0 {
		return c.Target
	}
	keys := make([]string, 0, len(c.Params))
	for k := range c.Params {
		keys = append(keys, k+"="+c.Params[k])
	}
	sort.Strings(keys)
	return c.Target + "[" + strings.Join(keys, ",") + "]"
}

// Prepare makes and prepares the system of every target variant of the
// plan, in plan order: command targets get their ports and provenance
// (binary SHA-256, git revision); long-lived servers are started (or
// reached) once, their data prepared and their provenance read (versions,
// settings, query plans). On an error, what was prepared stays for Close.
func (r *Runner) Prepare(ctx context.Context) (map[string]result.Provenance, error) {
	dir, err := tmpdir.New("", "run")
	if err != nil {
		return nil, err
	}
	r.logDir = dir
	cells := map[string][]suite.Cell{}
	var keys []string
	for _, c := range r.plan.Cells {
		key := VariantKey(c)
		if _, seen := cells[key]; !seen {
			keys = append(keys, key)
		}
		cells[key] = append(cells[key], c)
	}
	prov := map[string]result.Provenance{}
	for _, key := range keys {
		c := cells[key][0]
		if _, done := r.systems[key]; done {
			continue // prepared first, as another target's companion
		}
		t, err := r.s.TargetFor(c)
		if err != nil {
			return nil, err
		}
		cenv, err := r.prepareCompanions(ctx, key, t, cells, prov)
		if err != nil {
			return nil, err
		}
		sys, err := system.New(system.Env{Suite: r.s, Name: key, Target: t, Params: c.Params, Cells: cells[key], LogDir: r.logDir, Notes: r.opts.Notes, CompanionEnv: cenv, RunEnv: r.opts.Env})
		if err != nil {
			return nil, err
		}
		r.systems[key] = sys
		r.order = append(r.order, key)
		pv, err := sys.Prepare(ctx)
		if err != nil {
			return nil, fmt.Errorf("target %q: %w", key, err)
		}
		prov[key] = pv
	}
	return prov, nil
}

// Close stops every prepared system, last prepared first, and removes the
// run's temp dir. It may be called more than once.
func (r *Runner) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	for i := len(r.order) - 1; i >= 0; i-- {
		_ = r.systems[r.order[i]].Close(ctx)
	}
	r.order = nil
	if r.logDir != "" {
		_ = tmpdir.Remove(r.logDir)
		r.logDir = ""
	}
}

// Run measures every sample the writer does not hold yet, appending each as
// it finishes. It returns interrupted=true when ctx ended first: the sample
// in flight is not written (a resumed run measures it again).
func (r *Runner) Run(ctx context.Context, w Sink) (interrupted bool, err error) {
	var todo []suite.Sample
	for _, s := range r.plan.Samples {
		if !w.Done(s.Key) {
			todo = append(todo, s)
		}
	}
	var measured time.Duration
	for i, ps := range todo {
		if ctx.Err() != nil {
			return true, nil
		}
		cell := r.plan.Cells[ps.Cell]
		eta := r.eta(todo[i:], measured, i)
		spec, err := r.spec(ctx, cell, ps)
		if err != nil {
			return false, fmt.Errorf("sample %s: %w", ps.Key, err)
		}
		idx := i + 1
		spec.OnPhase = func(phase string, planned time.Duration) {
			if r.opts.OnProgress != nil {
				r.opts.OnProgress(Progress{Index: idx, Total: len(todo), Key: ps.Key, Phase: phase, PhasePlanned: planned, ETA: eta})
			}
		}
		spec.OnEngine, spec.OnSampler = r.opts.OnEngine, r.opts.OnSampler
		t0 := time.Now()
		var check func([]result.RanFile) error
		if r.opts.CheckRan != nil {
			variant := VariantKey(cell)
			check = func(ran []result.RanFile) error { return r.opts.CheckRan(variant, ran) }
		}
		s, refused := measure(ctx, spec, r.opts.Executor, check)
		measured += time.Since(t0)
		if refused != nil {
			return false, refused
		}
		if ctx.Err() != nil {
			if r.opts.OnInterrupted != nil {
				r.opts.OnInterrupted(s)
			}
			return true, nil
		}
		if err := w.Append(s); err != nil {
			return false, err
		}
		if r.opts.OnSample != nil {
			left := time.Duration(0)
			if n := len(todo) - idx; n > 0 {
				left = measured / time.Duration(idx) * time.Duration(n)
			}
			r.opts.OnSample(idx, len(todo), s, left)
		}
	}
	return false, nil
}

// eta estimates the time left: the plan's estimate per sample until one
// sample has been measured, then the measured average.
func (r *Runner) eta(left []suite.Sample, measured time.Duration, done int) time.Duration {
	if done > 0 {
		return measured / time.Duration(done) * time.Duration(len(left))
	}
	sub := *r.plan
	sub.Samples = left
	return sub.Estimate(sub.Startup)
}

// spec builds the run spec of one planned sample: what the runner knows
// (key, engine, phases, thresholds, sampler, placement), completed by the
// variant's system.
func (r *Runner) spec(ctx context.Context, c suite.Cell, ps suite.Sample) (system.Spec, error) {
	th := r.s.Thresholds
	base := system.Spec{
		Key: ps.Key, Cell: ps.CellID, Repeat: ps.Repeat, Smoke: r.plan.IsSmoke,
		Case: c.CaseLabel(), Variant: c.VariantLabel(),
		Protocol: string(c.Protocol),
		Engine:   load.Config{EngineConfig: result.EngineConfig{Connections: c.Connections, Pipeline: c.Pipeline, Rate: c.Rate, Seed: ps.Seed, Arrival: r.s.Arrival, MaxBacklog: r.s.MaxBacklog, TimerSlackUS: r.s.TimerSlack.D().Microseconds()}},
		Phases:   PhasesOf(r.plan),
		Thresholds: result.Thresholds{Coverage: th.Coverage, P99: th.P99.D(), Errors: th.Errors, Timeouts: th.Timeouts,
			Unexpected: th.Unexpected, Dropped: th.Dropped, MaxMiss: th.MaxMiss},
		SamplerInterval:  r.s.Sampler.Interval.D(),
		SamplerNoPSS:     r.s.Sampler.NoPSS,
		ClientCPUs:       string(r.s.Placement.ClientCPUs),
		ClientGOMAXPROCS: r.s.Placement.ClientGOMAXPROCS,
		BusyPoll:         busyPoll(r.s.Placement.BusyPoll),
		IOUringOff:       ioUringOff(r.s.Placement.IOUring),
		CoalesceOff:      coalesceOff(r.s.Placement.Coalesce),
		OwnProcess:       r.opts.OwnProcess,
	}
	key := VariantKey(c)
	sys, ok := r.systems[key]
	if !ok {
		return base, fmt.Errorf("target %q was not prepared", key)
	}
	spec, err := sys.Spec(ctx, c, base)
	if err != nil {
		return spec, err
	}
	if spec, err = r.withCompanions(ctx, c, spec); err != nil {
		return spec, err
	}
	// The suite's assertions hold for every kind of target: judged here,
	// after the system's own judge.
	if aj := system.JudgeAssertions(r.s, c); aj != nil {
		spec.Judge = system.Judges(spec.Judge, aj)
	}
	spec.Config = &result.Config{Cell: CellConfig(c), Engine: spec.Engine.EngineConfig, Phases: spec.Phases,
		Protocol: spec.Protocol, Driver: spec.DriverConfig, System: spec.SystemConfig}
	return spec, nil
}

// PhasesOf returns a plan's phases as Measure takes them.
func PhasesOf(p *suite.Plan) result.Phases {
	return result.Phases{Baseline: p.Phases.Baseline.D(), Warmup: p.Phases.Warmup.D(), Settle: p.Phases.Settle.D(),
		Load: p.Phases.Load.D(), Recovery: p.Phases.Recovery.D(), Requests: p.Requests}
}

// CellConfig records a plan cell in a sample's configuration.
func CellConfig(c suite.Cell) *result.CellConfig {
	return &result.CellConfig{ID: c.ID, Target: c.Target, Params: c.Params, Path: c.Path, Protocol: string(c.Protocol),
		Workload: c.Workload, Connections: c.Connections, Batch: c.Batch, Rate: c.Rate, Pipeline: c.Pipeline}
}
