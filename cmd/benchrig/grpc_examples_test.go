package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/grpcephemeral"
)

// The gRPC examples' suites, reduced: phases of 300 ms (no warm-up or
// settle), one repeat, 2 connections × 4 requests in flight, the same
// targets and paths; benchrig's own floor is not measured.
var grpcExampleReduced = []string{
	"--no-calibrate", "--set", "repeats=1", "--set", "connections=2", "--set", "pipeline=4",
	"--set", "phases.baseline=300ms", "--set", "phases.warmup=0s", "--set", "phases.settle=0s",
	"--set", "phases.load=300ms", "--set", "phases.recovery=300ms",
}

// runGRPCExample runs a reduced copy of the suite at the repository path
// file with the built benchrig br in the repository's root (the suite's
// paths are relative to it; a process of its own, so the test changes no
// working directory), its bin/greeter-server replaced by bin, and returns
// the results file, which verifies.
func runGRPCExample(t *testing.T, br, root, file, bin string) (string, *resultsDoc) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	const greeter = "[bin/greeter-server,"
	if !strings.Contains(string(src), greeter) {
		t.Fatalf("%s: no command starting %s: the test no longer matches the suite", file, greeter)
	}
	dir := t.TempDir()
	copyFile := filepath.Join(dir, filepath.Base(file))
	if err := os.WriteFile(copyFile, []byte(strings.ReplaceAll(string(src), greeter, "["+bin+",")), 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "r.json")
	cmd := exec.Command(br, append([]string{"run", copyFile, "-o", res}, grpcExampleReduced...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run %s: %v\n%s", file, err, out)
	}
	if out, _, code := invoke(t, "verify", res); code != 0 {
		t.Errorf("verify %s: exit %d: %s", file, code, out)
	}
	return res, readResults(t, res)
}

// checkGRPCExampleSamples fails unless the samples are exactly one per
// target, each with the protocol wanted, requests answered, no error,
// timeout or unexpected answer, and the server's CPU and memory sampled
// in the baseline, the load and the recovery.
func checkGRPCExampleSamples(t *testing.T, doc *resultsDoc, protocols map[string]string) {
	t.Helper()
	if len(doc.Samples) != len(protocols) {
		t.Errorf("%d samples, want one per target %v", len(doc.Samples), protocols)
	}
	seen := map[string]bool{}
	for _, s := range doc.Samples {
		if s.Target == nil {
			t.Errorf("%s: no target", s.Cell)
			continue
		}
		name := s.Target.Name
		want, ok := protocols[name]
		if !ok || seen[name] {
			t.Errorf("%s: target %q, want each of %v once", s.Cell, name, protocols)
		}
		seen[name] = true
		if s.Error != "" || s.Load == nil || s.Load.Requests == 0 || s.Load.Errors != 0 || s.Load.Timeouts != 0 || s.Load.Unexpected != 0 {
			t.Errorf("%s: error %q, load %+v", s.Cell, s.Error, s.Load)
		}
		if s.Protocol != want || s.Config == nil || s.Config.Protocol != want {
			t.Errorf("%s: protocol %q (config %+v), want %s", s.Cell, s.Protocol, s.Config, want)
		}
		if s.Server == nil || s.Server.Figures.WindowSeconds == 0 {
			t.Errorf("%s: the server was not sampled", s.Cell)
			continue
		}
		var phases []string
		for _, r := range s.Server.Samples {
			phases = append(phases, r.Phase)
		}
		for _, p := range []string{"baseline", "load", "recovery"} {
			if !slices.Contains(phases, p) {
				t.Errorf("%s: no server reading in the %s (readings in %q)", s.Cell, p, phases)
			}
		}
	}
}

// TestGRPCExampleSuites runs reduced copies of examples/grpc/servers.yaml
// (grpc-go and @grpc/grpc-js on Node 24, started fresh for every sample)
// and examples/suites/grpc-vs-json.yaml (SayHello as gRPC and as JSON over
// HTTP/1.1): every target answers every call, each sample records its
// protocol and its server's figures by phase, the files verify, the Node
// target's provenance names Node 24, and compare sets gRPC against JSON
// case by case. Without Node 24 from npm: testenv (run make seeds-npm).
func TestGRPCExampleSuites(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	grpcephemeral.NodeRuntime(t)
	root, err := grpcephemeral.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, _ := greeterServer(t)
	br := linkBuild(t, ".", t.TempDir(), "benchrig")

	t.Run("servers", func(t *testing.T) {
		_, doc := runGRPCExample(t, br, root, "examples/grpc/servers.yaml", bin)
		checkGRPCExampleSamples(t, doc, map[string]string{"grpc-go": "grpc", "grpc-js": "grpc"})
		if v := doc.Header.Targets["grpc-js"].Version; !strings.HasPrefix(v, "v24.") {
			t.Errorf("grpc-js: runtime version %q, want Node v24.x (examples/grpc/node_modules/node24)", v)
		}
	})

	t.Run("grpc-vs-json", func(t *testing.T) {
		res, doc := runGRPCExample(t, br, root, "examples/suites/grpc-vs-json.yaml", bin)
		checkGRPCExampleSamples(t, doc, map[string]string{"grpc": "grpc", "json": "http"})
		out, stderr, code := invoke(t, "compare", res, "--a", "grpc", "--b", "json")
		if code != 0 || !strings.Contains(out, "grpc hello-grpc") || !strings.Contains(out, "json hello-json") || !strings.Contains(out, "2 conns · p=4") {
			t.Errorf("compare --a grpc --b json: exit %d\n%s\n%s", code, out, stderr)
		}
	})
}
