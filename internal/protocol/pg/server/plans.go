package postgres

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/protocol/pg/driver"
	"github.com/benchrig/benchrig/internal/result"
)

// Plan counts of a sample (pg_prepared_statements is per backend, so they
// are read on every benchmark connection): once right after the warm-up's
// publishing operation, which sets each connection's base, and once when
// the connection is closed, after the window, which gives the counts of the
// window. They reach Sample.Stats as PlanKey(role, "generic"|"custom") and
// PlansConnsKey, and the plan_cache_mode the connections ran with reaches
// the sample's Target.Settings as PlansModeSetting.

// PlansModeSetting is the key in a sample's Target.Settings of the
// plan_cache_mode its connections ran with, as they read it ("auto",
// "force_custom_plan"; differing modes joined by ",").
const PlansModeSetting = "plans.plan_cache_mode"

// PlansConnsKey is the Sample.Stats key of the number of connections whose
// plan counts were read after the window.
const PlansConnsKey = "plans.connections"

// planReadTimeout bounds one connection's plan reading.
const planReadTimeout = 2 * time.Second

// PlanKey is the Sample.Stats key of a statement role's ("read",
// "update") generic or custom plan count: "plans.read.generic".
func PlanKey(role, kind string) string { return "plans." + role + "." + kind }

// samplePlans gathers the plan counts read at the connections' close.
type samplePlans struct {
	mu    sync.Mutex
	sum   pg.Plans
	valid bool // some connection was read
	// failed: a reading failed; the later connections close unread (a
	// server that does not answer costs one planReadTimeout, not one per
	// connection).
	failed atomic.Bool
}

// add adds one connection's (or loop's) reading.
func (p *samplePlans) add(q pg.Plans, err error) {
	if err != nil {
		p.failed.Store(true)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sum.Add(q)
	p.valid = true
}

// get returns the sum so far and whether anything was read.
func (p *samplePlans) get() (pg.Plans, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sum, p.valid
}

// stats writes the counts into a Stats map.
func (p *samplePlans) stats(out map[string]float64) {
	sum, ok := p.get()
	if !ok {
		return
	}
	roles := make([]string, 0, len(sum.Statements))
	for r := range sum.Statements {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	for _, r := range roles {
		c := sum.Statements[r]
		out[PlanKey(r, "generic")] = float64(c.Generic)
		out[PlanKey(r, "custom")] = float64(c.Custom)
	}
	out[PlansConnsKey] = float64(sum.Conns)
}

// judge records the connections' plan_cache_mode in the sample's target
// settings.
func (p *samplePlans) judge(s *result.Sample) {
	sum, ok := p.get()
	if !ok || sum.Mode == "" || s.Target == nil {
		return
	}
	if s.Target.Settings == nil {
		s.Target.Settings = map[string]string{}
	}
	s.Target.Settings[PlansModeSetting] = sum.Mode
}

// planCtx is a bounded context for a plan reading at close time, where the
// engine gives none.
func planCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), planReadTimeout)
}

// Close reads the connection's plan counts since its base, once, then
// closes it. A connection closed while a Do is in flight on it (the engine
// aborting a window) is closed at once, unread: its counts are lost.
func (c *sampleConn) Close() error {
	if c.inDo.Load() == 0 && !c.plans.failed.Load() {
		c.closeOnce.Do(func() {
			ctx, cancel := planCtx()
			c.plans.add(c.Conn.PlanStats(ctx))
			cancel()
		})
	}
	return c.Conn.Close()
}

// planLoop is an event loop of the sample whose Close reads the plan
// counts of its connections first.
type planLoop struct {
	sampleLoop
	plans     *samplePlans
	running   atomic.Int32 // Runs in progress
	closeOnce sync.Once
}

// Run drives the loop, noting that it runs.
func (l *planLoop) Run(ctx context.Context, pipeline int, deadline int64, w driver.LoopWork) error {
	l.running.Add(1)
	defer l.running.Add(-1)
	return l.sampleLoop.Run(ctx, pipeline, deadline, w)
}

// Close reads the loop's plan counts since their base, once, then closes
// it. A loop closed while it runs (a cancelled window) is closed at once,
// unread.
func (l *planLoop) Close() error {
	if l.running.Load() == 0 && !l.plans.failed.Load() {
		l.closeOnce.Do(func() {
			ctx, cancel := planCtx()
			l.plans.add(l.sampleLoop.PlanStats(ctx))
			cancel()
		})
	}
	return l.sampleLoop.Close()
}
