package run

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/sample"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/target"
)

// Companions: process trees sampled beside a sample's target (the database
// behind an application), each with a sampler of its own, marked at the
// same phase edges as the target's, and derived over the same load window
// and completed requests into result.Sample.Companions.

// companionSampler is one companion's sampler within a measurement.
type companionSampler struct {
	c   system.Companion
	rec *result.Companion
	smp *sample.Sampler
}

// startCompanions starts a sampler on every companion of the spec. A
// companion that cannot be sampled (it is gone, or has no process here)
// is recorded with its error, and a dead one makes the sample UNHEALTHY.
func (m *measurement) startCompanions(ctx context.Context) {
	for _, c := range m.spec.Companions {
		role := result.RoleCompanion
		if c.Name == m.spec.Headline {
			role = result.RoleHeadline
		}
		m.s.Companions = append(m.s.Companions, result.Companion{Name: c.Name, Role: role, Target: c.Info})
		rec := &m.s.Companions[len(m.s.Companions)-1]
		cs := &companionSampler{c: c, rec: rec}
		m.companions = append(m.companions, cs)
		switch {
		case c.Target == nil || c.Target.PID() <= 0:
			rec.Error = "no process to sample on this machine"
			continue
		case !c.Target.Alive():
			rec.Error = "not running"
			m.s.Verdict.Add("companion %s is not running", c.Name)
			continue
		}
		cfg := sample.Config{Interval: m.spec.SamplerInterval, NoPSS: m.spec.SamplerNoPSS, PID: c.Target.PID()}
		if co, ok := c.Target.(system.Companioned); ok {
			cfg.Also = co.AlsoPIDs()
		}
		smp, err := sample.Start(ctx, cfg)
		if err != nil {
			rec.Error = err.Error()
			m.s.Verdict.Add("sample companion %s: %v", c.Name, err)
			continue
		}
		cs.smp = smp
	}
	// Pointers into m.s.Companions stay valid: the slice is not grown again.
	for i, cs := range m.companions {
		cs.rec = &m.s.Companions[i]
	}
}

// markCompanions takes a sample of every companion at a phase edge.
func (m *measurement) markCompanions(phase string) {
	for _, cs := range m.companions {
		if cs.smp != nil {
			cs.smp.Mark(phase)
		}
	}
}

// finishCompanions stops the companions' samplers and derives their
// figures over the load window, per completed request of the sample.
func (m *measurement) finishCompanions() {
	var completed int64
	if m.s.Load != nil {
		completed = m.s.Load.Requests
	}
	for _, cs := range m.companions {
		if cs.smp == nil {
			continue
		}
		samples := cs.smp.Stop()
		f := sample.Derive(samples, sample.Window{Phase: sample.PhaseLoad}, completed, proc.OnlineCount())
		cs.rec.Server = &result.Server{Figures: f, Samples: samples}
		if m.s.Server != nil && m.s.Server.Placement != nil {
			cs.rec.Server.Placement = &result.Placement{ClientCPUs: m.s.Server.Placement.ClientCPUs}
		}
		if !cs.c.Target.Alive() {
			m.s.Verdict.Add("companion %s exited during the sample", cs.c.Name)
		}
	}
}

// resolveProcess finds a companion given by PID or port.
func resolveProcess(c suite.Companion) (system.Companion, error) {
	name := c.CompanionName()
	pid := c.PID
	info := &result.TargetInfo{Name: name, Kind: suite.KindAttach}
	if c.Port != 0 {
		var err error
		if c.Tree {
			var holders []int
			pid, holders, err = proc.Default().ListenerTree(c.Port)
			if err == nil {
				ps := make([]string, len(holders))
				for i, h := range holders {
					ps[i] = strconv.Itoa(h)
				}
				info.Settings = map[string]string{"listeners": strings.Join(ps, ","), "sampled_root": strconv.Itoa(pid)}
			}
		} else {
			pid, err = target.PIDListeningOn(c.Port)
		}
		if err != nil {
			return system.Companion{}, fmt.Errorf("companion %s: %w", name, err)
		}
	}
	at, err := target.Attach(pid)
	if err != nil {
		return system.Companion{}, fmt.Errorf("companion %s: %w", name, err)
	}
	info.PID = pid
	info.Name = name + " (" + at.Comm() + ")"
	if bin, err := proc.Default().Exe(pid); err == nil {
		info.Binary = bin
	}
	return system.Companion{Name: name, Target: at, Info: info}, nil
}

// prepareCompanions prepares, before target variant key, the targets its
// target names as companions (each once, for the whole run: cells are its
// own cells plus those of every target that names it, so that a database
// is sized for the applications' connections too), finds the ones given by PID or port,
// and returns the environment the user's command is started with (the
// companions' DSNs).
func (r *Runner) prepareCompanions(ctx context.Context, key string, t *suite.Target, cells map[string][]suite.Cell, prov map[string]result.Provenance) ([]string, error) {
	var env []string
	for _, c := range t.Companions {
		name := c.CompanionName()
		if c.Target == "" {
			comp, err := resolveProcess(c)
			if err != nil {
				return nil, fmt.Errorf("target %q: %w", key, err)
			}
			r.procCompanions[key+"/"+name] = comp
			continue
		}
		sys, ok := r.systems[c.Target]
		if !ok {
			ct := r.s.Targets[c.Target]
			if ct == nil {
				return nil, fmt.Errorf("target %q: companion %s: unknown target %q", key, name, c.Target)
			}
			envCells := append(append([]suite.Cell(nil), cells[c.Target]...), r.companionUsers(c.Target)...)
			var err error
			sys, err = system.New(system.Env{Suite: r.s, Name: c.Target, Target: ct, Cells: envCells, LogDir: r.logDir, Notes: r.opts.Notes, RunEnv: r.opts.Env})
			if err != nil {
				return nil, err
			}
			r.systems[c.Target] = sys
			r.order = append(r.order, c.Target)
			pv, err := sys.Prepare(ctx)
			if err != nil {
				return nil, fmt.Errorf("target %q (companion of %q): %w", c.Target, key, err)
			}
			prov[c.Target] = pv
		}
		if _, ok := sys.(system.Sampled); !ok {
			return nil, fmt.Errorf("target %q: companion %s: a %s target cannot be sampled as a companion", key, name, r.s.Targets[c.Target].Kind())
		}
		if c.DSNEnv != "" {
			ds, ok := sys.(system.DSNSource)
			if !ok {
				return nil, fmt.Errorf("target %q: companion %s: target %q has no DSN to pass in $%s", key, name, c.Target, c.DSNEnv)
			}
			env = append(env, c.DSNEnv+"="+ds.CompanionDSN())
		}
	}
	return env, nil
}

// companionUsers are the plan's cells of every target that names target
// as a companion: a database is sized for their connections too.
func (r *Runner) companionUsers(target string) []suite.Cell {
	var out []suite.Cell
	for _, c := range r.plan.Cells {
		if t := r.s.Targets[c.Target]; t != nil {
			for _, cc := range t.Companions {
				if cc.Target == target {
					out = append(out, c)
					break
				}
			}
		}
	}
	return out
}

// withCompanions resets the companion targets' data (as their own samples
// do) and adds the companions of cell c's target to the sample's spec.
func (r *Runner) withCompanions(ctx context.Context, c suite.Cell, spec system.Spec) (system.Spec, error) {
	t := r.s.Targets[c.Target]
	if t == nil || len(t.Companions) == 0 {
		return spec, nil
	}
	key := VariantKey(c)
	for _, cc := range t.Companions {
		name := cc.CompanionName()
		if cc.Target == "" {
			spec.Companions = append(spec.Companions, r.procCompanions[key+"/"+name])
			continue
		}
		sys := r.systems[cc.Target]
		if rs, ok := sys.(system.SampleResetter); ok {
			if err := rs.ResetForSample(ctx); err != nil {
				return spec, fmt.Errorf("companion %s: %w", name, err)
			}
		}
		tgt, info := sys.(system.Sampled).SampledTarget()
		spec.Companions = append(spec.Companions, system.Companion{Name: name, Target: tgt, Info: info})
	}
	spec.Headline = t.Headline
	if spec.Headline == c.Target {
		spec.Headline = ""
	}
	return spec, nil
}
