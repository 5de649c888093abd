package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/pgephemeral"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/testenv"
)

// seedRuntimes skips (or, with CI=true, fails) when an example's npm
// packages are not installed: .ci/run runs npm ci in each example dir.
func seedRuntimes(t *testing.T, dir string, bins ...string) {
	t.Helper()
	for _, b := range bins {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			testenv.Missing(t, testenv.Seeds, "seed runtime missing (npm ci in "+dir+"): "+err.Error())
		}
	}
}

// checkSeedSamples fails on a sample that failed, sent nothing, or had an
// error, a timeout or a response whose status or body was not the
// expected one (every path checks its whole body). Latency-bound verdicts
// are not asserted: this machine's noise decides them.
func checkSeedSamples(t *testing.T, doc *resultsDoc, want int) {
	t.Helper()
	if len(doc.Samples) != want {
		t.Fatalf("%d samples, want %d", len(doc.Samples), want)
	}
	for _, s := range doc.Samples {
		if s.Error != "" || s.Load == nil || s.Load.Requests == 0 || s.Load.Errors != 0 || s.Load.Timeouts != 0 || s.Load.Unexpected != 0 {
			t.Errorf("%s: error %q, load %+v", s.Cell, s.Error, s.Load)
		}
		if s.Server == nil || s.Server.Figures.WindowSeconds == 0 {
			t.Errorf("%s: the server was not sampled", s.Cell)
		}
	}
}

// checkVersions fails unless every target variant's provenance records
// want[variant] as its runtime version (the report's Version column).
func checkVersions(t *testing.T, targets map[string]result.Provenance, want map[string]string) {
	t.Helper()
	for name, v := range want {
		if got := targets[name].Version; got != v {
			t.Errorf("target %s: version %q, want %q (provenance %+v)", name, got, v, targets)
		}
	}
}

// TestSeed002Smoke runs examples/seeds/002/suite.yaml in smoke mode on
// its own Node 24 (from npm) for the workload that differs most between
// frameworks: a POST whose JSON body each one validates its own way, at
// 1,000 req/s over 32 connections. All six frameworks start, pass their
// checks and answer every request with the expected body; each target's
// provenance names Node v24.22.3; every sample ran under the seed's
// container limits (2 GiB, no swap, 256 pids; 2 cores, and node-http at
// 0.5 too), recorded with the group's counters; the file verifies.
func TestSeed002Smoke(t *testing.T) {
	t.Parallel() // a built benchrig, with its own directory
	needCgroups(t)
	dir, _ := filepath.Abs("../../examples/seeds/002")
	seedRuntimes(t, dir, "node_modules/node24/bin/node", "node_modules/fastify", "node_modules/@nestjs/core", "node_modules/total4", "node_modules/total5")
	res := filepath.Join(t.TempDir(), "seed002.json")
	out, stderr, code := runBuilt(t, dir, nil, "run", "suite.yaml", "-o", res, "--smoke", "--set", "paths=validate", "--set", "rates=1000")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	doc := readResults(t, res)
	checkSeedSamples(t, doc, 7)
	want := map[string]string{}
	for _, fw := range []string{"node-http[cpus=2]", "node-http[cpus=0.5]", "express", "fastify", "nestjs", "total4", "total5"} {
		want[fw] = "v24.22.3"
	}
	for _, s := range doc.Samples {
		cg, load := loadCgroup(t, &s)
		cpus := 2.0
		if strings.Contains(s.Cell, "cpus=0.5") {
			cpus = 0.5
		}
		if l := cg.Limits; l.CPUs != cpus || l.MemoryBytes != 2<<30 || l.SwapBytes == nil || *l.SwapBytes != 0 || l.Pids != 256 {
			t.Errorf("%s: limits %+v", s.Cell, l)
		}
		if load.Cores > cpus*1.1+0.01 {
			t.Errorf("%s: %.2f cores under a %.1f-core limit", s.Cell, load.Cores, cpus)
		}
	}
	checkVersions(t, doc.Header.Targets, want)
	if out, _, code := invoke(t, "verify", "--allow-smoke", res); code != 0 {
		t.Errorf("verify --allow-smoke: exit %d: %s", code, out)
	}
	md := filepath.Join(t.TempDir(), "r.md")
	if _, stderr, code := invoke(t, "report", "--allow-smoke", res, "-o", md); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(md)
	if !strings.Contains(string(b), "| nestjs | command | v24.22.3 |") {
		t.Errorf("the report's provenance table has no Version for nestjs:\n%s", b)
	}
}

// TestSeed003Smoke runs examples/seeds/003/suite.yaml in smoke mode: the
// raw http server and Express 4 (at /, and reading the small and medium
// objects from a real ephemeral PostgreSQL through node-postgres, the DSN
// given by $SEED003_PG as withpg gives it) on the two runtimes of the
// params axis, whose values are paths to the binaries. Every sample
// answers with the expected bodies, each variant's provenance names its
// own Node (v12.13.0, v16.13.2), the file verifies, and compare pairs the
// runtimes case by case.
func TestSeed003Smoke(t *testing.T) {
	t.Parallel() // a built benchrig, with its own directory and environment
	dir, _ := filepath.Abs("../../examples/seeds/003")
	n12, n16 := "node_modules/node12/bin/node", "node_modules/node16/bin/node"
	seedRuntimes(t, dir, n12, n16, "node_modules/express", "node_modules/pg")
	pgNeedBinaries(t)
	ctx := context.Background()
	srv, err := pgephemeral.StartEphemeral(ctx, pgephemeral.Options{MaxConnections: 40})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop(context.Background()) })
	sql, err := os.ReadFile(filepath.Join(dir, "data.sql"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgclient.Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, string(sql))
	conn.Close(ctx)
	if err != nil {
		t.Fatalf("data.sql: %v", err)
	}
	res := filepath.Join(t.TempDir(), "seed003.json")
	out, stderr, code := runBuilt(t, dir, []string{"SEED003_PG=" + srv.DSN()}, "run", "suite.yaml", "-o", res, "--smoke")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	doc := readResults(t, res)
	checkSeedSamples(t, doc, 8)
	checkVersions(t, doc.Header.Targets, map[string]string{
		"raw[node=" + n12 + "]": "v12.13.0", "raw[node=" + n16 + "]": "v16.13.2",
		"express[node=" + n12 + "]": "v12.13.0", "express[node=" + n16 + "]": "v16.13.2",
	})
	if out, _, code := invoke(t, "verify", "--allow-smoke", res); code != 0 {
		t.Errorf("verify --allow-smoke: exit %d: %s", code, out)
	}
	out, stderr, code = invoke(t, "compare", "--allow-smoke", res, "--a", "express node="+n12+" small", "--b", "express node="+n16+" small")
	if code != 0 || !strings.Contains(out, "req/s") {
		t.Errorf("compare the runtimes: exit %d\n%s\n%s", code, out, stderr)
	}
}
