package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/protocol/pg/driver"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/workload"
)

// planSample measures one read-only sample of path on s, with or without
// a warm-up, and returns it.
func planSample(t *testing.T, ctx context.Context, s *PGServer, path pg.Config, warmup time.Duration) *result.Sample {
	t.Helper()
	spec, err := s.Spec(path)
	if err != nil {
		t.Fatal(err)
	}
	spec.Engine = load.Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1}}
	spec.Phases = result.Phases{Warmup: warmup, Load: 700 * time.Millisecond}
	spec.Thresholds = result.DefaultThresholds()
	spec.SamplerInterval = 100 * time.Millisecond
	smp := run.Measure(ctx, spec)
	if smp.Error != "" || smp.Load == nil {
		t.Fatalf("sample failed: %s", smp.Error)
	}
	if smp.Load.Errors+smp.Load.Unexpected+smp.Load.Timeouts != 0 {
		t.Fatalf("failures: %v", smp.Load.Messages)
	}
	t.Logf("%s: %d requests, stats %v, plan mode %q", path.Label(), smp.Load.Requests, smp.Stats, smp.Target.Settings[PlansModeSetting])
	return smp
}

// TestSamplePlans checks that a sample records the plan counts of its
// window on every connection, on the event loop (any) and per connection
// (prepared-one in pipeline mode): with plan_cache_mode auto, form array
// is custom-planned 5 times per connection, then generic; with
// force_custom_plan every call is custom-planned.
func TestSamplePlans(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := startTestPG(t, ctx)

	array := pgPath(pg.Any, workload.Hot, 2)
	array.Form = pg.FormArray
	custom := pgPath(pg.Any, workload.Hot, 2)
	custom.PlanCacheMode = pg.PlanCustom
	pipelined := pgPath(pg.PreparedOne, workload.Hot, 2)
	pipelined.BatchMode, pipelined.PlanCacheMode = pg.Pipeline, pg.PlanCustom
	if err := s.Prepare(ctx, []pg.Config{array, custom, pipelined}, 4); err != nil {
		t.Fatal(err)
	}
	read := func(smp *result.Sample) (generic, custom, requests float64) {
		// The server planned the requests outstanding at the window's
		// end that it answered in the drain too.
		return smp.Stats[PlanKey("read", "generic")], smp.Stats[PlanKey("read", "custom")], float64(smp.Load.Requests + smp.Load.OutstandingAnswered)
	}

	t.Run("array auto, no warm-up: 5 custom per connection, then generic", func(t *testing.T) {
		smp := planSample(t, ctx, s, array, 0)
		g, c, n := read(smp)
		conns := smp.Stats[PlansConnsKey]
		if conns != 2 || c != 5*conns || g+c != n {
			t.Errorf("generic %v custom %v over %v connections, want 5 custom each and generic+custom = %v requests", g, c, conns, n)
		}
		if m := smp.Target.Settings[PlansModeSetting]; m != "auto" {
			t.Errorf("plan_cache_mode %q, want auto", m)
		}
	})
	t.Run("array auto after a warm-up: all generic", func(t *testing.T) {
		smp := planSample(t, ctx, s, array, 300*time.Millisecond)
		// A connection reopened in the window (on a loaded machine, one
		// whose warm-up request outlived the drain after the warm-up)
		// plans its first five executions again.
		if g, c, n := read(smp); c > 5*float64(smp.Load.Reconnects) || g+c != n {
			t.Errorf("generic %v custom %v (%d reconnects), want all %v requests generic", g, c, smp.Load.Reconnects, n)
		}
	})
	t.Run("force_custom_plan on the event loop: every call custom", func(t *testing.T) {
		smp := planSample(t, ctx, s, custom, 300*time.Millisecond)
		if g, c, n := read(smp); g != 0 || c != n || n == 0 {
			t.Errorf("generic %v custom %v, want all %v requests custom", g, c, n)
		}
		if m := smp.Target.Settings[PlansModeSetting]; m != "force_custom_plan" {
			t.Errorf("plan_cache_mode %q, want force_custom_plan", m)
		}
	})
	t.Run("force_custom_plan per connection: every statement custom", func(t *testing.T) {
		smp := planSample(t, ctx, s, pipelined, 300*time.Millisecond)
		// prepared-one runs its statement once per key: batch 2.
		if g, c, n := read(smp); g != 0 || c != 2*n || n == 0 {
			t.Errorf("generic %v custom %v, want 2 × %v requests custom", g, c, n)
		}
	})
}
