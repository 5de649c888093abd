package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	httpdrv "github.com/benchrig/benchrig/internal/driver/http"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/target"
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
	OnEngine func(e *load.Engine)
}

// Runner runs a suite's plan: it prepares the long-lived servers, then
// measures every sample in the plan's order, appending each to a results
// file as it finishes.
type Runner struct {
	plan   *suite.Plan
	s      *suite.Suite
	opts   PlanOptions
	logDir string
	// servers are long-lived targets (PostgreSQL, redis-server, attached
	// processes), by target name and params.
	servers map[string]*longLived
	// commands are command targets per cell, with their ports.
	commands map[string]*commandTarget
}

// NewRunner returns a runner for the plan.
func NewRunner(p *suite.Plan, opts PlanOptions) *Runner {
	return &Runner{plan: p, s: p.Suite, opts: opts, servers: map[string]*longLived{}, commands: map[string]*commandTarget{}}
}

// variantKey names a target with its params ("node-http[node=node20]").
func variantKey(c suite.Cell) string {
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

// Prepare resolves every target of the plan: command targets get their
// ports and provenance (binary SHA-256, git revision); long-lived servers
// are started (or reached) once, their data prepared and their provenance
// read (versions, settings, query plans).
func (r *Runner) Prepare(ctx context.Context) (map[string]result.Provenance, error) {
	dir, err := tmpdir.New("", "run")
	if err != nil {
		return nil, err
	}
	r.logDir = dir
	prov := map[string]result.Provenance{}
	for _, c := range r.plan.Cells {
		key := variantKey(c)
		t, err := r.s.TargetFor(c)
		if err != nil {
			return nil, err
		}
		switch t.Kind() {
		case suite.KindCommand:
			if _, ok := r.commands[key]; ok {
				continue
			}
			port := t.Port
			if port == 0 {
				if port, err = freePort(); err != nil {
					return nil, err
				}
			}
			ct := &commandTarget{name: key, t: t, port: port, logDir: r.logDir, defCPUs: string(r.s.Placement.TargetCPUs)}
			r.commands[key] = ct
			prov[key] = ct.provenance()
		default:
			if _, ok := r.servers[key]; ok {
				continue
			}
			ll, err := r.startLongLived(ctx, key, c, t)
			if err != nil {
				return nil, fmt.Errorf("target %q: %w", key, err)
			}
			r.servers[key] = ll
			prov[key] = ll.provenance
		}
	}
	return prov, nil
}

// Close stops the long-lived servers and removes the run's temp dir.
func (r *Runner) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	for _, ll := range r.servers {
		if ll.stop != nil {
			_ = ll.stop(ctx)
		}
	}
	if r.logDir != "" {
		_ = os.RemoveAll(r.logDir)
	}
}

// Run measures every sample the writer does not hold yet, appending each as
// it finishes. It returns interrupted=true when ctx ended first: the sample
// in flight is not written (a resumed run measures it again).
func (r *Runner) Run(ctx context.Context, w *result.Writer) (interrupted bool, err error) {
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
		spec.OnEngine = r.opts.OnEngine
		t0 := time.Now()
		s := Measure(ctx, spec)
		measured += time.Since(t0)
		if ctx.Err() != nil {
			return true, nil
		}
		if err := w.Append(s); err != nil {
			return false, err
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

// spec builds the run spec of one planned sample.
func (r *Runner) spec(ctx context.Context, c suite.Cell, ps suite.Sample) (Spec, error) {
	p := r.s.Paths[c.Path]
	phases := Phases{Baseline: r.plan.Phases.Baseline.D(), Warmup: r.plan.Phases.Warmup.D(), Settle: r.plan.Phases.Settle.D(),
		Load: r.plan.Phases.Load.D(), Recovery: r.plan.Phases.Recovery.D(), Requests: r.plan.Requests}
	th := r.s.Thresholds
	spec := Spec{
		Key: ps.Key, Cell: ps.CellID, Repeat: ps.Repeat, Smoke: r.plan.IsSmoke,
		Case: c.CaseLabel(), Variant: c.VariantLabel(),
		Protocol: string(c.Protocol),
		Engine:   load.Config{Connections: c.Connections, Pipeline: c.Pipeline, Rate: c.Rate, Seed: ps.Seed},
		Phases:   phases,
		Thresholds: result.Thresholds{Coverage: th.Coverage, P99: th.P99.D(), Errors: th.Errors, Timeouts: th.Timeouts,
			Unexpected: th.Unexpected, Dropped: th.Dropped},
		SamplerInterval: r.s.Sampler.Interval.D(),
		SamplerNoPSS:    r.s.Sampler.NoPSS,
		ClientCPUs:      string(r.s.Placement.ClientCPUs),
	}
	key := variantKey(c)
	if ct, ok := r.commands[key]; ok {
		if p.HTTP == nil {
			return spec, fmt.Errorf("path %q is %s, but command target %q serves http", c.Path, p.Protocol(), key)
		}
		dc := httpConfig(p.HTTP, ct.vars())
		d, err := httpdrv.New(dc)
		if err != nil {
			return spec, fmt.Errorf("path %q: %w", c.Path, err)
		}
		spec.Driver = d
		spec.Start = ct.starter()
		spec.PreChecks = ct.checks()
		spec.PostChecks = ct.checks()
		spec.Config, _ = json.Marshal(struct {
			Cell   suite.Cell     `json:"cell"`
			Engine load.Config    `json:"engine"`
			Phases Phases         `json:"phases"`
			HTTP   httpdrv.Config `json:"http"`
		}{c, spec.Engine, phases, dc.Redacted()})
		return spec, nil
	}
	ll, ok := r.servers[key]
	if !ok {
		return spec, fmt.Errorf("target %q was not prepared", key)
	}
	return ll.spec(ctx, spec, c, p)
}

// httpConfig is the HTTP driver config of a suite path with placeholders
// filled.
func httpConfig(h *suite.HTTPPath, vars map[string]string) httpdrv.Config {
	dc := httpdrv.DefaultConfig()
	dc.URL = suite.Expand(h.URL, vars)
	dc.Method = h.Method
	dc.Headers = h.Headers
	dc.Body = h.Body
	dc.ExpectStatus = h.ExpectStatus
	if h.ExpectBody != "" {
		b := h.ExpectBody
		dc.ExpectBody = &b
	}
	return dc
}

// longLived is a target that lives across samples: an ephemeral or remote
// PostgreSQL, a redis-server, an attached process.
type longLived struct {
	provenance result.Provenance
	stop       func(ctx context.Context) error
	// spec completes a sample's spec for a path on this server.
	spec func(ctx context.Context, base Spec, c suite.Cell, p *suite.Path) (Spec, error)
}

// startLongLived prepares a target that lives across samples.
func (r *Runner) startLongLived(ctx context.Context, key string, c suite.Cell, t *suite.Target) (*longLived, error) {
	switch t.Kind() {
	case suite.KindAttach:
		return r.attach(key, t)
	case suite.KindPostgres:
		return r.startPostgres(ctx, key, c, t)
	case suite.KindRedis:
		return r.startRedis(ctx, key, c, t)
	}
	return nil, fmt.Errorf("unknown target kind %q", t.Kind())
}

// attach measures an already running HTTP server; it is never started or
// stopped.
func (r *Runner) attach(key string, t *suite.Target) (*longLived, error) {
	pid := t.Attach.PID
	if t.Attach.Port != 0 {
		p, err := target.PIDListeningOn(t.Attach.Port)
		if err != nil {
			return nil, err
		}
		pid = p
	}
	a, err := target.Attach(pid)
	if err != nil {
		return nil, err
	}
	port := t.Port
	if port == 0 {
		port = t.Attach.Port
	}
	vars := map[string]string{"port": fmt.Sprint(port)}
	info := &result.TargetInfo{Name: key, Kind: suite.KindAttach, PID: pid}
	return &longLived{
		provenance: result.Provenance{Kind: suite.KindAttach},
		spec: func(ctx context.Context, base Spec, c suite.Cell, p *suite.Path) (Spec, error) {
			if p.HTTP == nil {
				return base, fmt.Errorf("attached target %q: only http paths are supported", key)
			}
			dc := httpConfig(p.HTTP, vars)
			d, err := httpdrv.New(dc)
			if err != nil {
				return base, err
			}
			base.Driver, base.Attach, base.AttachInfo = d, a, info
			base.Config, _ = json.Marshal(struct {
				Cell   suite.Cell     `json:"cell"`
				Engine load.Config    `json:"engine"`
				HTTP   httpdrv.Config `json:"http"`
			}{c, base.Engine, dc.Redacted()})
			return base, nil
		},
	}, nil
}
