package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/benchrig/benchrig/internal/testenv"
)

// metricsTarget serves "hello" at / and, at /metrics, the Prometheus text
// format with a gauge that grows by 4096 at every scrape; malformed makes
// /metrics answer text the parser refuses.
func metricsTarget(t *testing.T, malformed bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var scrapes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			fmt.Fprint(w, "hello")
			return
		}
		n := scrapes.Add(1)
		if malformed {
			fmt.Fprint(w, "# TYPE heap_bytes gauge\nheap_bytes{oops 1\n")
			return
		}
		fmt.Fprintf(w, "# TYPE heap_bytes gauge\nheap_bytes %d\n# TYPE other_total counter\nother_total %d\n", 1<<20+4096*n, n)
	}))
	t.Cleanup(srv.Close)
	return srv, &scrapes
}

// metricsSuite writes a suite of one address target with a metrics
// endpoint, short phases, one sample. Its scrapes have 100 ms (every) to
// answer, a deadline other tests' load can move: the tests that use it run
// serially.
func metricsSuite(t *testing.T, url string) string {
	t.Helper()
	s := fmt.Sprintf(`name: metrics
repeats: 1
phases: {baseline: 300ms, warmup: 300ms, settle: 300ms, load: 800ms, recovery: 300ms}
targets:
  web:
    address: {}
    metrics: {url: %q, every: 100ms, series: [heap_bytes, other_total]}
paths:
  hello: {http: {url: %q}}
matrix:
  targets: [web]
  paths: [hello]
  connections: [2]
`, url+"/metrics", url+"/")
	p := filepath.Join(t.TempDir(), "suite.yaml")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMetricsThroughEveryPhase: a suite run scrapes the target's metrics
// through baseline, warm-up, settle, load and recovery, records the
// gauge's growing values and the scrapes' cost in the results file, and
// the reports show the series.
func TestMetricsThroughEveryPhase(t *testing.T) {
	srv, served := metricsTarget(t, false)
	out := filepath.Join(t.TempDir(), "r.json")
	if o, e, code := invoke(t, "run", metricsSuite(t, srv.URL), "-o", out); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, o, e)
	}
	s := readResults(t, out).Sample
	m := s.Metrics
	if m == nil || len(m.Points) == 0 {
		t.Fatalf("no metrics recorded: %+v", m)
	}
	phases := map[string]int{}
	last := 0.0
	for i, p := range m.Points {
		if p.Error != "" {
			t.Fatalf("point %d: %s", i, p.Error)
		}
		phases[p.Phase]++
		if v := p.Values["heap_bytes"]; v <= last {
			t.Errorf("point %d: heap_bytes %v after %v, want growing", i, v, last)
		} else {
			last = v
		}
	}
	for _, ph := range []string{"baseline", "warmup", "settle", "load", "recovery"} {
		if phases[ph] == 0 {
			t.Errorf("no scrape in %s (have %v)", ph, phases)
		}
	}
	if c := m.Cost; c.Scrapes != len(m.Points) || int64(c.Scrapes) != served.Load() || c.InLoad != phases["load"] || c.WallSeconds <= 0 || c.Bytes == 0 {
		t.Errorf("cost %+v for %d points, %d served", c, len(m.Points), served.Load())
	}
	// The load's requests never went through the scraper's connection:
	// the server saw exactly the scrapes at /metrics.
	if s.Load == nil || s.Load.Requests == 0 {
		t.Fatalf("no load recorded")
	}
	txtFile := filepath.Join(t.TempDir(), "r.txt")
	if _, e, code := invoke(t, "report", out, "-o", txtFile); code != 0 {
		t.Fatalf("text report: %s", e)
	}
	txt, _ := os.ReadFile(txtFile)
	if !strings.Contains(string(txt), "Target metrics "+srv.URL+"/metrics: ") || !strings.Contains(string(txt), "during the load, 0 failed") {
		t.Errorf("text report does not state the scrapes and their cost:\n%s", txt)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if _, e, code := invoke(t, "report", out, "-o", html); code != 0 {
		t.Fatalf("html report: %s", e)
	}
	b, _ := os.ReadFile(html)
	if !strings.Contains(string(b), "heap_bytes") {
		t.Errorf("html report draws no heap_bytes series")
	}
}

// TestMetricsMalformed: a target whose metrics text does not parse gives a
// sample with a clear note (and the load's figures), not a failed run.
func TestMetricsMalformed(t *testing.T) {
	srv, _ := metricsTarget(t, true)
	out := filepath.Join(t.TempDir(), "r.json")
	if o, e, code := invoke(t, "run", metricsSuite(t, srv.URL), "-o", out); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, o, e)
	}
	s := readResults(t, out).Sample
	if s.Error != "" || s.Load == nil || s.Load.Requests == 0 {
		t.Fatalf("sample failed: %q", s.Error)
	}
	m := s.Metrics
	if m == nil || m.Cost.Failed == 0 || m.Cost.Failed != m.Cost.Scrapes || len(m.Notes) == 0 ||
		!strings.Contains(m.Notes[0], "malformed Prometheus text") || !strings.Contains(m.Notes[0], "line 2") {
		t.Fatalf("metrics %+v: want every scrape failed with a note naming the malformed line", m)
	}
	txt, _, _ := invoke(t, "report", out)
	if !strings.Contains(txt, "malformed Prometheus text") {
		t.Errorf("text report does not show the note:\n%s", txt)
	}
}

// TestMetricsNodeHeap: a real Node server (examples/servers/node-http)
// started by `benchrig http --target` exposes process.memoryUsage() at
// /metrics; the run records its JS heap beside the RSS the sampler read.
func TestMetricsNodeHeap(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	node := testenv.LookPath(t, testenv.Node, "node")
	port := freePort(t)
	args := append([]string{"http", fmt.Sprintf("http://127.0.0.1:%d/", port),
		"--target", node + " ../../examples/servers/node-http/server.js", "-c", "4", "-d", "1s",
		"--metrics-url", fmt.Sprintf("http://127.0.0.1:%d/metrics", port), "--metrics-every", "200ms",
		"--metrics-series", "nodejs_heap_size_used_bytes,nodejs_heap_size_total_bytes,nodejs_external_memory_bytes,process_resident_memory_bytes"}, shortPhases...)
	doc, stderr, code := quickJSON(t, args...)
	s := doc.Sample
	if code != 0 || s.Metrics == nil {
		t.Fatalf("exit %d, metrics %+v: %s", code, s.Metrics, stderr)
	}
	phases := map[string]bool{}
	failed := 0
	for _, p := range s.Metrics.Points {
		if p.Error != "" {
			// a Node busy with the load can miss a 200 ms scrape on a
			// loaded machine; every phase must still have good points
			failed++
			continue
		}
		phases[p.Phase] = true
		used, total, rss := p.Values["nodejs_heap_size_used_bytes"], p.Values["nodejs_heap_size_total_bytes"], p.Values["process_resident_memory_bytes"]
		if used <= 0 || total < used || rss < total {
			t.Errorf("point %+v: want 0 < heap used ≤ heap total ≤ RSS", p.Values)
		}
	}
	for _, ph := range []string{"baseline", "warmup", "settle", "load", "recovery"} {
		if !phases[ph] {
			t.Errorf("no good scrape in %s (have %v; %d of %d failed)", ph, phases, failed, len(s.Metrics.Points))
		}
	}
	if s.Server == nil || s.Server.Figures.RSSLoad == 0 {
		t.Fatalf("no RSS sampled beside the heap")
	}
}
