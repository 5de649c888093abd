package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func buildExample(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/servers/"+name).CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, out)
	}
	return bin
}

func quickJSON(t *testing.T, args ...string) (*resultsDoc, string, int) {
	t.Helper()
	out, stderr, code := cli(t, append(args, "--json")...)
	if out == "" {
		t.Fatalf("%v: no results on stdout (exit %d):\n%s", args, code, stderr)
	}
	return parseResults(t, out), stderr, code
}

// TestRateStallIsSeen is the coordinated-omission test: a server that
// answers in about 1 ms stalls every response for 1 s once during a 10 s run
// at 1,000 req/s over 32 connections. Latency measured from the due time
// must show the stall (p99 ≥ 500 ms), service time must not hide it less
// (p99 near the normal service time), and the run must be UNHEALTHY, exit 3.
func TestRateStallIsSeen(t *testing.T) {
	if testing.Short() {
		t.Skip("10 s run")
	}
	bin := buildExample(t, "stall")
	addr := startListening(t, exec.Command(bin, "-addr", "127.0.0.1:0", "-delay", "1ms", "-stall-after", "4s", "-stall-for", "1s"))
	doc, stderr, code := quickJSON(t, "http", "http://"+addr+"/", "-R", "1000", "-c", "32", "-d", "10s", "--fail-unhealthy")
	l := doc.Sample.Load
	if code != exitUnhealthy {
		t.Errorf("exit %d, want %d (unhealthy): %s", code, exitUnhealthy, stderr)
	}
	corrected, service := l.Latency.P(99), l.Service.P(99)
	t.Logf("corrected p99 %d µs, service p99 %d µs, max %d µs, coverage %.1f %%, dropped %d, late %d",
		corrected, service, l.Latency.MaxUS, l.Rate.Coverage, l.Rate.Dropped, l.Rate.Late)
	if corrected < 500_000 {
		t.Errorf("corrected p99 %d µs, want ≥ 500 ms", corrected)
	}
	if service > 50_000 {
		t.Errorf("service-time p99 %d µs, want near the 1 ms service time (≤ 50 ms on a shared machine)", service)
	}
	if l.Latency.MaxUS < 900_000 {
		t.Errorf("corrected max %d µs, want ≈ 1 s", l.Latency.MaxUS)
	}
	v := doc.Sample.Verdict
	if v.Healthy || len(v.Reasons) == 0 || !strings.Contains(strings.Join(v.Reasons, "\n"), "corrected p99") {
		t.Errorf("verdict %+v, want UNHEALTHY naming the corrected p99", v)
	}
}

// TestRateHealthyOnExampleServer: at 100 and 1,000 req/s for 5 s against the
// example server, the achieved rate is within 1 % of the target, coverage
// ≥ 99 %, and the run is HEALTHY.
func TestRateHealthyOnExampleServer(t *testing.T) {
	if testing.Short() {
		t.Skip("10 s of runs")
	}
	bin := buildExample(t, "hello")
	addr := startListening(t, exec.Command(bin, "-addr", "127.0.0.1:0"))
	for _, rate := range []string{"100", "1000"} {
		doc, stderr, code := quickJSON(t, "http", "http://"+addr+"/", "-R", rate, "-d", "5s", "--fail-unhealthy")
		r := doc.Sample.Load.Rate
		if code != 0 || !doc.Sample.Verdict.Healthy {
			t.Errorf("rate %s: exit %d, verdict %+v, %s", rate, code, doc.Sample.Verdict, stderr)
		}
		if diff := (r.Achieved - r.Target) / r.Target; diff > 0.01 || diff < -0.01 {
			t.Errorf("rate %s: achieved %.2f req/s, more than 1 %% off", rate, r.Achieved)
		}
		if r.Coverage < 99 {
			t.Errorf("rate %s: coverage %.2f %%", rate, r.Coverage)
		}
		if doc.Sample.Load.Connections != 32 {
			t.Errorf("rate mode default connections %d, want 32", doc.Sample.Load.Connections)
		}
	}
}
