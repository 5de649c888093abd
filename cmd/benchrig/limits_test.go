package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/cgroup"
	"github.com/benchrig/benchrig/internal/result"
)

// needCgroups skips a test without a usable cgroup hierarchy (not root,
// not delegated), and fails it in CI, which runs as root with writable
// ones.
func needCgroups(t *testing.T) {
	t.Helper()
	if _, err := cgroup.Detect(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cgroups: %v", err)
		}
		t.Skipf("cgroups not usable here: %v", err)
	}
}

// buildBucket returns examples/servers/bucket, a server that answers as fast
// as it can below its rate.
func buildBucket(t *testing.T) string {
	t.Helper()
	return buildExample(t, "bucket")
}

// loadCgroup is a sample's control-group figures of its load phase.
func loadCgroup(t *testing.T, s *result.Sample) (*result.Cgroup, result.CgroupFigures) {
	t.Helper()
	if s.Server == nil || s.Server.Cgroup == nil {
		t.Fatalf("sample %s: no cgroup record (server %+v)", s.Key, s.Server)
	}
	cg := s.Server.Cgroup
	for _, f := range cg.Phases {
		if f.Phase == "load" {
			return cg, f
		}
	}
	t.Fatalf("sample %s: no load phase in the group's figures %+v", s.Key, cg.Phases)
	return nil, result.CgroupFigures{}
}

// TestQuickLimits: --limit-cpus and --limit-pids run --target in a group of
// its own; the sample records the limits and the group's counters by
// phase, the load phase within the CPU limit by the kernel's own count
// (the bound holds on a loaded machine: a quota is a ceiling), and the
// group is gone afterwards.
func TestQuickLimits(t *testing.T) {
	t.Parallel() // a quota is a ceiling: other tests' load cannot lift it
	needCgroups(t)
	bin := buildBucket(t)
	port := freePort(t)
	// The load phase is what is judged; the others short (shortPhases),
	// not --target's defaults (a 5 s recovery).
	stdout, stderr, code := invoke(t, append([]string{"http", fmt.Sprintf("http://127.0.0.1:%d/", port), "--target", bin + " -rate 1e9",
		"--limit-cpus", "0.2", "--limit-pids", "64", "-c", "4", "-d", "2s", "--no-calibrate", "--json"}, shortPhases...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s := parseResults(t, stdout).Sample
	cg, load := loadCgroup(t, &s)
	if cg.Limits.CPUs != 0.2 || cg.Limits.Pids != 64 || cg.Total == nil {
		t.Errorf("record %+v", cg)
	}
	if load.Cores > 0.26 || load.CPUSeconds <= 0 || load.Periods == 0 {
		t.Errorf("load under a 0.2-core limit: %.3f cores, %.3f s, %d periods", load.Cores, load.CPUSeconds, load.Periods)
	}
	if cg.Group != "" {
		matches, _ := filepath.Glob("/sys/fs/cgroup/*/*/" + cg.Group)
		more, _ := filepath.Glob("/sys/fs/cgroup/*/" + cg.Group)
		if len(matches)+len(more) > 0 {
			t.Errorf("group %s left behind: %v %v", cg.Group, matches, more)
		}
	}
}

// TestSuiteLimitsAxis: a target's limits may take a param, so one server is
// measured at two limits as a matrix axis, each variant's samples
// recording their own; a limit out of its bound is refused at its field.
func TestSuiteLimitsAxis(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	needCgroups(t)
	bin := buildBucket(t)
	dir := t.TempDir()
	suite := fmt.Sprintf(`name: limits-axis
repeats: 1
phases: {load: 1s}
targets:
  bucket:
    command: [%q, -rate, "1e9"]
    env: {PORT: "{port}"}
    ready: {tcp: "127.0.0.1:{port}"}
    params: {cpus: ["0.2", "1"]}
    limits: {cpus: "{cpus}", memory: 256MiB}
paths:
  get: {http: {url: "http://127.0.0.1:{port}/"}}
matrix: {targets: [bucket], paths: [get], connections: [2]}
`, bin)
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	if _, stderr, code := invoke(t, "run", file, "-o", out, "--no-calibrate"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := map[string]float64{}
	for _, s := range readResults(t, out).Samples {
		cg, _ := loadCgroup(t, &s)
		got[s.Cell] = cg.Limits.CPUs
		if cg.Limits.MemoryBytes != 256<<20 {
			t.Errorf("%s: memory limit %d", s.Cell, cg.Limits.MemoryBytes)
		}
	}
	if len(got) != 2 || got["bucket/get/c=2/b=1/cpus=0.2"] != 0.2 || got["bucket/get/c=2/b=1/cpus=1"] != 1 {
		t.Errorf("limits by cell: %v", got)
	}
	bad := strings.Replace(suite, `params: {cpus: ["0.2", "1"]}`, `params: {cpus: ["0.2", "5000"]}`, 1)
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := invoke(t, "plan", file)
	if code != 2 || !strings.Contains(stderr, "targets.bucket.limits.cpus: CPUs 5000 is above the maximum") {
		t.Errorf("a limit out of bound: exit %d, %q", code, stderr)
	}
}
