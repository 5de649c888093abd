//go:build linux

package pg

import (
	"reflect"
	"testing"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/workload"
)

// planWindow runs n reads of cfg on one connection, on the event loop or
// through Do, and returns the plan counts read after it (a reading before
// the window makes them the window's own).
func planWindow(t *testing.T, cfg Config, onLoop bool, n int) Plans {
	t.Helper()
	ctx := testCtx(t)
	d := loopDriver(t, cfg)
	if onLoop {
		l, err := d.OpenLoop(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		b := l.(Backends)
		if p, err := b.PlanStats(ctx); err != nil || p.Conns != 1 || p.Statements["read"] != (PlanCount{}) {
			t.Fatalf("reading before any request: %+v, %v", p, err)
		}
		w := &testWork{limit: uint64(n)}
		if err := l.Run(ctx, 1, 0, w); err != nil {
			t.Fatal(err)
		}
		for _, o := range w.outs {
			if o.Class != driver.OK {
				t.Fatalf("outcome %+v", o)
			}
		}
		p, err := b.PlanStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The reading used the connection: a Run goes on on it.
		w = &testWork{limit: 1}
		if err := l.Run(ctx, 1, 0, w); err != nil || len(w.outs) != 1 || w.outs[0].Class != driver.OK || w.reconnects != 0 {
			t.Fatalf("Run after PlanStats: %v, %+v", err, w)
		}
		return p
	}
	c, err := d.OpenConn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.PlanStats(ctx); err != nil {
		t.Fatal(err)
	}
	out := make([]driver.Outcome, 1)
	for seq := 0; seq < n; seq++ {
		if err := c.Do(ctx, []driver.Request{{Seq: uint64(seq)}}, out); err != nil || out[0].Class != driver.OK {
			t.Fatalf("Do: %v, %+v", err, out[0])
		}
	}
	p, err := c.PlanStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlanCounts: after a window, each statement's generic and custom plan
// counts are the window's executions, read per connection on both paths:
// k parameters (ARRAY[$1,…,$k]) switch to a generic plan after five custom
// ones under auto; force_custom_plan plans every call and is flagged;
// force_generic_plan never plans one.
func TestPlanCounts(t *testing.T) {
	const n = 20
	wl := workload.Config{Kind: workload.Uniform, Batch: 8, Seed: 1}
	for _, tc := range []struct {
		name   string
		cfg    Config
		mode   string
		want   PlanCount
		always []string
	}{
		{"array auto", Config{Path: Any, Form: FormArray, PlanCacheMode: PlanAuto, Workload: wl}, "auto", PlanCount{Generic: n - 5, Custom: 5}, nil},
		{"array custom", Config{Path: Any, Form: FormArray, PlanCacheMode: PlanCustom, Workload: wl}, "force_custom_plan", PlanCount{Custom: n}, []string{"read"}},
		{"param custom", Config{Path: Any, PlanCacheMode: PlanCustom, Workload: wl}, "force_custom_plan", PlanCount{Custom: n}, []string{"read"}},
		{"param generic", Config{Path: Any, PlanCacheMode: PlanGeneric, Workload: wl}, "force_generic_plan", PlanCount{Generic: n}, nil},
		{"sql custom", Config{Path: SQL, SQL: sqlRows, PlanCacheMode: PlanCustom, Workload: wl}, "force_custom_plan", PlanCount{Custom: n}, []string{"read"}},
	} {
		for _, onLoop := range []bool{true, false} {
			name := tc.name + " conn"
			if onLoop {
				name = tc.name + " loop"
			}
			t.Run(name, func(t *testing.T) {
				p := planWindow(t, tc.cfg, onLoop, n)
				if p.Mode != tc.mode || p.Conns != 1 || p.Statements["read"] != tc.want {
					t.Errorf("plans %+v, want mode %s and read %+v on 1 connection", p, tc.mode, tc.want)
				}
				if got := p.AlwaysCustom(); !reflect.DeepEqual(got, tc.always) {
					t.Errorf("AlwaysCustom %v, want %v", got, tc.always)
				}
			})
		}
	}
}

// TestPlanCountsDefaultAny: the default any form (one bigint[] parameter)
// under the server's own plan_cache_mode: every execution is counted,
// whichever plan it had, and the mode is read back.
func TestPlanCountsDefaultAny(t *testing.T) {
	p := planWindow(t, Config{Path: Any, Workload: workload.Config{Kind: workload.Mixed, Batch: 4, WriteEvery: 4}}, true, 12)
	r, u := p.Statements["read"], p.Statements["update"]
	if p.Mode != "auto" || r.Generic+r.Custom != 9 || u.Generic+u.Custom != 3 {
		t.Errorf("plans %+v, want 9 reads and 3 updates counted, mode auto", p)
	}
	t.Logf("any, bigint[] parameter, auto: %+v", p)
}

func TestPlansAdd(t *testing.T) {
	var sum Plans
	sum.Add(Plans{Mode: "auto", Conns: 2, Statements: map[string]PlanCount{"read": {Generic: 3, Custom: 5}}})
	sum.Add(Plans{Mode: "force_custom_plan", Conns: 1, Statements: map[string]PlanCount{"read": {Custom: 4}, "update": {Custom: 2}}})
	sum.Add(Plans{Mode: "auto", Conns: 1})
	want := Plans{Mode: "auto,force_custom_plan", Conns: 4,
		Statements: map[string]PlanCount{"read": {Generic: 3, Custom: 9}, "update": {Custom: 2}}}
	if !reflect.DeepEqual(sum, want) {
		t.Errorf("sum %+v, want %+v", sum, want)
	}
	if got := sum.AlwaysCustom(); !reflect.DeepEqual(got, []string{"update"}) {
		t.Errorf("AlwaysCustom %v, want [update]", got)
	}
}
