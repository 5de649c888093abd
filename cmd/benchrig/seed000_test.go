package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/testenv"
)

// seed000Node is the example's Node 24 (npm ci in examples/seeds/000
// installs it, with node-postgres); the test skips without it, and fails
// under CI=true, where .ci/run installs it.
func seed000Node(t *testing.T) {
	t.Helper()
	node := "../../examples/seeds/000/node_modules/.bin/node"
	_, err := os.Stat(node)
	_, perr := os.Stat("../../examples/seeds/000/node_modules/pg/package.json")
	if err == nil && perr == nil {
		return
	}
	testenv.Missing(t, testenv.Seeds, "examples/seeds/000 has no node_modules: npm ci there (Node 24 and pg come from npm)")
}

// TestSeed000Smoke runs examples/seeds/000/suite.yaml in smoke mode at 64
// connections and 1 key per request (CONNECTIONS and BATCHES as the seed's
// harness takes them): the Node.js app on node-postgres over both paths,
// with the ephemeral PostgreSQL as its companion, and benchrig's own pg
// driver on the same statements. Every app sample records the app's
// process and PostgreSQL's as separate trees, PostgreSQL's as the headline
// (the sample's server figures are the database's), the app got the DSN
// in its environment (it answered from the database), the pre-check saw
// the keys' order restored, and verify accepts the file.
func TestSeed000Smoke(t *testing.T) {
	pgNeedBinaries(t)
	seed000Node(t)
	t.Parallel() // a built benchrig, with its own directory and environment
	res := filepath.Join(t.TempDir(), "seed000.json")
	// The suite's paths (the app's dir) are relative to the repository's root.
	out, stderr, code := runBuilt(t, "../..", []string{"CONNECTIONS=64", "BATCHES=1"}, "run", "examples/seeds/000/suite.yaml", "-o", res, "--smoke")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	doc := readResults(t, res)
	if len(doc.Samples) != 8 {
		t.Fatalf("%d samples, want 8 (the app's 2 paths × 3 key counts, the pg driver's 2 paths at 1 key)", len(doc.Samples))
	}
	apps := 0
	for _, s := range doc.Samples {
		if s.Error != "" || s.Load == nil || s.Load.Requests == 0 || s.Load.Errors+s.Load.Unexpected+s.Load.Timeouts != 0 {
			t.Errorf("%s: error %q, load %+v, verdict %+v", s.Cell, s.Error, s.Load, s.Verdict)
			continue
		}
		if s.Config.Cell.Target != "app" {
			if len(s.Companions) != 0 || s.Server == nil || s.Server.Figures.SchedCPUSeconds <= 0 {
				t.Errorf("%s: the pg driver's sample should sample the server itself: companions %+v, server %+v", s.Cell, s.Companions, s.Server)
			}
			continue
		}
		apps++
		if s.Server == nil || s.Server.Figures.SchedCPUSeconds <= 0 || s.Server.Figures.RSSPeak == 0 {
			t.Errorf("%s: the app's own figures are missing: %+v", s.Cell, s.Server)
		}
		if len(s.Companions) != 1 {
			t.Errorf("%s: companions %+v, want PostgreSQL", s.Cell, s.Companions)
			continue
		}
		pg := s.Companions[0]
		if pg.Name != "pg" || pg.Role != result.RoleHeadline || pg.Target == nil || pg.Target.Kind != "postgres" || pg.Target.PID == 0 {
			t.Errorf("%s: companion %+v, want pg, the headline, the postmaster", s.Cell, pg)
		}
		// A one-second smoke window may show 0 CPU seconds from /proc: each
		// of the 64 fresh backends used under one 10 ms clock tick, and
		// /proc truncates per process. schedstat counts nanoseconds.
		if pg.Server == nil || pg.Server.Figures.SchedCPUSeconds <= 0 || pg.Server.Figures.WindowSeconds <= 0 ||
			pg.Server.Figures.Completed != s.Load.Requests || pg.Server.Figures.MaxProcesses < 2 {
			t.Errorf("%s: PostgreSQL's figures %+v, want its whole tree's CPU per completed request", s.Cell, pg.Server)
			continue
		}
		if s.HeadlineServer() != pg.Server {
			t.Errorf("%s: headline server is not PostgreSQL's", s.Cell)
		}
		if s.Target == nil || s.Target.PID == pg.Target.PID {
			t.Errorf("%s: the app and PostgreSQL are one tree: %+v", s.Cell, s.Target)
		}
	}
	if apps != 6 {
		t.Errorf("%d app samples, want 6", apps)
	}
	b, _ := os.ReadFile(res)
	if strings.Contains(string(b), "DATABASE_URL=") {
		t.Errorf("the app's environment (its DSN) is in the results file")
	}
	if out, _, code := invoke(t, "verify", "--allow-smoke", res); code != 0 {
		t.Errorf("verify --allow-smoke: exit %d: %s", code, out)
	}
	md, _, code := invoke(t, "report", "--allow-smoke", res, "-f", "md")
	if code != 0 || !strings.Contains(md, "Sampled processes") || !strings.Contains(md, "| headline |") {
		t.Errorf("markdown report (exit %d) does not show the app and PostgreSQL:\n%s", code, clip(md))
	}
}
