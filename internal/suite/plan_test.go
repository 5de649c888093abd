package suite_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/benchrig/benchrig/internal/protocol/all"
	httpproto "github.com/benchrig/benchrig/internal/protocol/http"
	. "github.com/benchrig/benchrig/internal/suite"
)

// orderSuite has three targets (variants A B C) and the given axes.
func orderSuite(t *testing.T, axes string, repeats int) *Suite {
	t.Helper()
	src := fmt.Sprintf(`name: order
repeats: %d
targets:
  A: {command: [a]}
  B: {command: [b]}
  C: {command: [c]}
paths:
  p: {http: {url: "http://127.0.0.1:1/"}}
matrix:
  targets: [A, B, C]
  paths: [p]
%s`, repeats, axes)
	return mustParse(t, "order.yaml", src)
}

// runOrder lists the plan's samples as "repeat:cellID".
func runOrder(t *testing.T, s *Suite) []string {
	t.Helper()
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, smp := range p.Samples {
		out = append(out, fmt.Sprintf("%d:%s", smp.Repeat, smp.CellID))
	}
	return out
}

// TestFairOrder checks the documented rule on the documented example:
// variants rotate left by (r−1), level axes reverse on even repeats,
// levels outer, variants inner.
func TestFairOrder(t *testing.T) {
	s := orderSuite(t, "  connections: [1, 2]\n", 3)
	want := []string{
		"1:A/p/c=1/b=1", "1:B/p/c=1/b=1", "1:C/p/c=1/b=1", "1:A/p/c=2/b=1", "1:B/p/c=2/b=1", "1:C/p/c=2/b=1",
		"2:B/p/c=2/b=1", "2:C/p/c=2/b=1", "2:A/p/c=2/b=1", "2:B/p/c=1/b=1", "2:C/p/c=1/b=1", "2:A/p/c=1/b=1",
		"3:C/p/c=1/b=1", "3:A/p/c=1/b=1", "3:B/p/c=1/b=1", "3:C/p/c=2/b=1", "3:A/p/c=2/b=1", "3:B/p/c=2/b=1",
	}
	if got := runOrder(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("order:\n got  %v\n want %v", got, want)
	}
}

// TestFairOrderAxes checks that every level axis reverses on even repeats,
// batches outermost, and that the rotation wraps around.
func TestFairOrderAxes(t *testing.T) {
	src := `name: axes
repeats: 4
targets:
  db: {postgres: {ephemeral: true}}
paths:
  one: {pg: {path: prepared-one}}
matrix:
  targets: [db]
  paths: [one]
  batches: [1, 16]
  connections: [4, 64]
  rates: [10, 20]
`
	s := mustParse(t, "axes.yaml", src)
	lv := func(b, c, r int) string { return fmt.Sprintf("db/one/c=%d/b=%d/r=%d", c, b, r) }
	r1 := []string{lv(1, 4, 10), lv(1, 4, 20), lv(1, 64, 10), lv(1, 64, 20), lv(16, 4, 10), lv(16, 4, 20), lv(16, 64, 10), lv(16, 64, 20)}
	var want []string
	for r := 1; r <= 4; r++ {
		for i := range r1 {
			id := r1[i]
			if r%2 == 0 {
				id = r1[len(r1)-1-i]
			}
			want = append(want, fmt.Sprintf("%d:%s", r, id))
		}
	}
	if got := runOrder(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("order:\n got  %v\n want %v", got, want)
	}

	s = orderSuite(t, "  connections: [1]\n", 4)
	got := runOrder(t, s)
	if strings.Join(got, " ") != "1:A/p/c=1/b=1 1:B/p/c=1/b=1 1:C/p/c=1/b=1 2:B/p/c=1/b=1 2:C/p/c=1/b=1 2:A/p/c=1/b=1 "+
		"3:C/p/c=1/b=1 3:A/p/c=1/b=1 3:B/p/c=1/b=1 4:A/p/c=1/b=1 4:B/p/c=1/b=1 4:C/p/c=1/b=1" {
		t.Errorf("rotation: %v", got)
	}
}

func TestEveryCellOncePerRepeat(t *testing.T) {
	s := mustLoad(t, "testdata/pg-local-cache.yaml")
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Samples) != len(p.Cells)*s.Repeats {
		t.Fatalf("%d samples for %d cells × %d repeats", len(p.Samples), len(p.Cells), s.Repeats)
	}
	seen := map[string]bool{}
	for i, smp := range p.Samples {
		if smp.Index != i || smp.Key != fmt.Sprintf("%s#%d", smp.CellID, smp.Repeat) || p.Cells[smp.Cell].ID != smp.CellID {
			t.Fatalf("sample %d: %+v", i, smp)
		}
		if seen[smp.Key] {
			t.Fatalf("sample key %q twice", smp.Key)
		}
		seen[smp.Key] = true
		if want := i/len(p.Cells) + 1; smp.Repeat != want {
			t.Fatalf("sample %d in repeat %d, want %d: repeats must not interleave", i, smp.Repeat, want)
		}
	}
}

func TestCells(t *testing.T) {
	s := mustLoad(t, "testdata/http-frameworks.yaml")
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range p.Cells {
		ids = append(ids, c.ID)
	}
	want := []string{
		"go-hello/hello/c=32/b=1/r=100", "node-http/hello/c=32/b=1/r=100/node=node18", "node-http/hello/c=32/b=1/r=100/node=node20",
		"go-hello/hello/c=32/b=1/r=1000", "node-http/hello/c=32/b=1/r=1000/node=node18", "node-http/hello/c=32/b=1/r=1000/node=node20",
	}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("cells:\n got  %v\n want %v", ids, want)
	}
	c := p.Cells[5]
	if c.Target != "node-http" || c.Params["node"] != "node20" || c.Path != "hello" || c.Protocol != httpproto.Key ||
		c.Connections != 32 || c.Batch != 1 || c.Rate != 1000 || c.Pipeline != 1 || !c.OpenLoop() {
		t.Errorf("cell fields: %+v", c)
	}
	tg, err := s.TargetFor(c)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Command[0] != "node20" || tg.Env["PORT"] != "{port}" || tg.Params != nil {
		t.Errorf("TargetFor: %+v", tg)
	}
	if s.Targets["node-http"].Command[0] != "{node}" {
		t.Error("TargetFor changed the suite")
	}
	if _, err := s.TargetFor(Cell{ID: "x", Target: "nope"}); err == nil {
		t.Error("TargetFor accepted an unknown target")
	}
}

func TestCellIDParts(t *testing.T) {
	src := pgHead + `matrix:
  cases:
    - {target: cache, path: mget, workload: hot}
    - {target: db, path: one}
  connections: [8]
  batches: [16]
  pipeline: [1, 4]
`
	p, err := mustParse(t, "ids.yaml", src).Plan()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range p.Cells {
		ids = append(ids, c.ID)
	}
	want := "cache/mget/hot/c=8/b=16 db/one/c=8/b=16 cache/mget/hot/c=8/b=16/p=4 db/one/c=8/b=16/p=4"
	if strings.Join(ids, " ") != want {
		t.Errorf("IDs %v, want %s", ids, want)
	}
}

func TestPlanDeterministic(t *testing.T) {
	plan := func(seed string) *Plan {
		s := mustLoad(t, "testdata/pg-local-cache.yaml")
		if seed != "" {
			if err := ApplyOverrides(s, nil, []string{"seed=" + seed}); err != nil {
				t.Fatal(err)
			}
		}
		p, err := s.Plan()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := plan(""), plan("")
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Error("same suite and seed, different plans")
	}
	c := plan("8")
	seeds := map[uint64]bool{}
	for i := range a.Samples {
		sa, sc := a.Samples[i], c.Samples[i]
		if sa.Key != sc.Key {
			t.Fatalf("the seed changed the order at %d: %s vs %s", i, sa.Key, sc.Key)
		}
		if sa.Seed == sc.Seed {
			t.Errorf("sample %s: same seed under suite seeds 7 and 8", sa.Key)
		}
		seeds[sa.Seed] = true
	}
	if len(seeds) != len(a.Samples) {
		t.Errorf("%d distinct sample seeds for %d samples", len(seeds), len(a.Samples))
	}
}

func TestSmoke(t *testing.T) {
	s := mustLoad(t, "testdata/http-frameworks.yaml")
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	sm := p.Smoke()
	if !sm.IsSmoke || p.IsSmoke || sm.Repeats != 1 || len(sm.Samples) != len(p.Cells) {
		t.Fatalf("smoke: %+v", sm)
	}
	want := Phases{Warmup: Duration(500 * time.Millisecond), Load: Duration(time.Second)}
	if sm.Phases != want || p.Phases == want {
		t.Errorf("smoke phases %+v (plan %+v)", sm.Phases, p.Phases)
	}
	for i, smp := range sm.Samples {
		if smp.Index != i || smp.Cell != i || smp.Repeat != 1 || smp.Key != p.Cells[i].ID+"#1" {
			t.Errorf("smoke sample %d: %+v", i, smp)
		}
	}
}

func TestEstimate(t *testing.T) {
	s := mustLoad(t, "testdata/http-frameworks.yaml")
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	// 6 cells × 3 repeats, each 1.5+15+6+60+30 s of phases plus startup.
	perSample := 112500*time.Millisecond + 3*time.Second
	if got := p.Estimate(3 * time.Second); got != 18*perSample {
		t.Errorf("Estimate = %s, want %s", got, 18*perSample)
	}
	if got := p.Smoke().Estimate(0); got != 6*1500*time.Millisecond {
		t.Errorf("smoke Estimate = %s", got)
	}

	// A request bound at a constant rate: 500 requests at 100 and 1000 req/s.
	if err := ApplyOverrides(s, nil, []string{"requests=500", "phases.load=0", "phases.baseline=0", "phases.warmup=0", "phases.settle=0", "phases.recovery=0", "repeats=1"}); err != nil {
		t.Fatal(err)
	}
	p, err = s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Estimate(0), 3*(5*time.Second+500*time.Millisecond); got != want || p.CountBounded() {
		t.Errorf("Estimate = %s, want %s (count bounded %v)", got, want, p.CountBounded())
	}
	if err := ApplyOverrides(s, nil, []string{"rates="}); err != nil {
		t.Fatal(err)
	}
	p, _ = s.Plan()
	if !p.CountBounded() || p.Estimate(time.Second) != 3*time.Second {
		t.Errorf("closed loop, request bound only: count bounded %v, estimate %s", p.CountBounded(), p.Estimate(time.Second))
	}
}

func TestPlanRevalidates(t *testing.T) {
	s := mustLoad(t, "testdata/http-frameworks.yaml")
	s.Matrix.Connections = nil
	if _, err := s.Plan(); err == nil || !strings.Contains(err.Error(), "matrix.connections: empty") {
		t.Errorf("Plan of an invalid suite: %v", err)
	}
	var hand Suite
	if _, err := hand.Plan(); err == nil {
		t.Error("Plan of an empty suite succeeded")
	}
}

// TestPlanBounds: counts over the bounds are refused before the plan is
// expanded (a billion repeats used to allocate gigabytes), each with the
// bound in the message; counts at the bounds are accepted.
func TestPlanBounds(t *testing.T) {
	for _, tc := range []struct {
		name, axes string
		repeats    int
		want       string // "" accepted
	}{
		{"billion repeats", "  connections: [1]\n", 1_000_000_000, "repeats: the plan would have up to 3 cells × 1000000000 repeats, over the bound of 100000 samples"},
		{"at the sample bound", "  connections: [1, 2]\n", MaxSamples / 6, ""},
		{"one over", "  connections: [1, 2]\n", MaxSamples/6 + 1, "over the bound of 100000 samples"},
		{"huge product", "  connections: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n  pipeline: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n", 1_000_000_000, "up to 300 cells × 1000000000 repeats"},
		{"connections", "  connections: [1000000]\n", 1, "matrix.connections[0]: must be ≤ 100000, got 1000000"},
		{"connections at the bound", "  connections: [100000]\n", 1, ""},
		{"pipeline", "  connections: [1]\n  pipeline: [100000]\n", 1, "matrix.pipeline[0]: must be ≤ 1024 (the drivers' deepest pipeline), got 100000"},
		{"pipeline at the bound", "  connections: [1]\n  pipeline: [1024]\n", 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := orderSuite(t, tc.axes, tc.repeats).Plan()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "" && len(p.Samples) > MaxSamples:
				t.Errorf("%d samples over the bound", len(p.Samples))
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}
