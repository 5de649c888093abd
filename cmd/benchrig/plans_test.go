package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunPlansAndSettings runs a small suite on an ephemeral PostgreSQL
// whose postgres.settings set plan_cache_mode and work_mem: the settings
// are in effect (a path without a mode of its own runs generic plans only)
// and recorded as the server reports them, each sample records its plan
// counts, and the report warns of the path forced to custom plans, naming
// its cell and statement, and of no other.
func TestRunPlansAndSettings(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	pgNeedBinaries(t)
	dir := t.TempDir()
	suite := `name: plans
repeats: 1
phases: {warmup: 300ms, load: 700ms}
targets:
  pg:
    postgres:
      ephemeral: true
      settings: {plan_cache_mode: force_generic_plan, work_mem: 8MB}
paths:
  generic: {pg: {path: any}}
  custom: {pg: {path: any, plan_cache_mode: force_custom_plan}}
workloads:
  hot: {kind: hot, rows: 512, hot: 64}
matrix:
  cases: [{target: pg, path: generic, workload: hot}, {target: pg, path: custom, workload: hot}]
  connections: [2]
  batches: [4]
`
	file := filepath.Join(dir, "plans.yaml")
	if err := os.WriteFile(file, []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "r.json")
	if out, stderr, code := invoke(t, "run", file, "-o", res); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	doc := readResults(t, res)
	prov := doc.Header.Targets["pg"]
	for k, want := range map[string]string{"plan_cache_mode": "force_generic_plan", "work_mem": "8MB"} {
		if prov.Settings[k] != want {
			t.Errorf("provenance %s = %q, want %q (read back from the server)", k, prov.Settings[k], want)
		}
	}
	if prov.Settings["extension.plpgsql"] == "" {
		t.Errorf("provenance %v lacks the installed extensions", prov.Settings)
	}
	if len(doc.Samples) != 2 {
		t.Fatalf("%d samples, want 2", len(doc.Samples))
	}
	for _, s := range doc.Samples {
		// The server also planned the requests outstanding at the window's
		// end that it answered in the drain.
		g, c, n := s.Stats["plans.read.generic"], s.Stats["plans.read.custom"], float64(s.Load.Requests+s.Load.OutstandingAnswered)
		mode := s.Target.Settings["plans.plan_cache_mode"]
		t.Logf("%s: %v requests, generic %v, custom %v, mode %q", s.Cell, n, g, c, mode)
		switch {
		case strings.Contains(s.Cell, "/generic/") && (g != n || c != 0 || mode != "force_generic_plan"):
			t.Errorf("%s: generic %v custom %v mode %q over %v requests: want all generic under the suite's force_generic_plan", s.Cell, g, c, mode, n)
		case strings.Contains(s.Cell, "/custom/") && (c != n || g != 0 || mode != "force_custom_plan"):
			t.Errorf("%s: generic %v custom %v mode %q over %v requests: want all custom", s.Cell, g, c, mode, n)
		}
		if s.Target.Settings["work_mem"] != "8MB" {
			t.Errorf("%s: target work_mem %q", s.Cell, s.Target.Settings["work_mem"])
		}
	}
	for _, f := range []string{"text", "md", "json"} {
		out, stderr, code := invoke(t, "report", res, "-f", f)
		if code != 0 {
			t.Fatalf("report -f %s: exit %d: %s", f, code, stderr)
		}
		if n := strings.Count(out, "Custom-planned on every call"); n != 1 || !strings.Contains(out, "pg custom hot: statement") {
			t.Errorf("report -f %s: %d plan warnings, want one naming the custom path's read statement:\n%s", f, n, out)
		}
	}
}
