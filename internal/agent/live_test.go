package agent

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/suite"
)

// TestLiveProgressOfAgents: while two agents run a sample's load window,
// the coordinator's handle reads the merged load as it goes (what --ui
// shows): each agent's part, the counts summed, and a complete second
// merged from the agents' histograms of it, never more than the results
// file then records for that second.
func TestLiveProgressOfAgents(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond)
		_, _ = w.Write([]byte("ok\n"))
	}))
	t.Cleanup(srv.Close)
	doc := fmt.Sprintf(`name: live-agents
seed: 1
repeats: 1
phases: {baseline: 0s, warmup: 0s, settle: 0s, load: 2500ms, recovery: 0s}
thresholds: {coverage: 0, p99: 10s}
targets:
  srv:
    address: {addr: %q}
    checks: [{url: %q, status: 200}]
paths:
  hello:
    http: {url: %q}
matrix: {targets: [srv], paths: [hello], connections: [4]}
`, srv.Listener.Addr().String(), srv.URL+"/", srv.URL+"/")
	s, err := suite.Parse("test", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cl := startCluster(t, 2, s)
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen []load.Progress
		stop = make(chan struct{})
		wg   sync.WaitGroup
	)
	r := run.NewRunner(p, run.PlanOptions{Executor: cl.coord.Executor(), OnEngine: func(w load.Watched) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if pr := w.Progress(); pr.Running && pr.Second.T >= 0 {
					mu.Lock()
					seen = append(seen, pr)
					mu.Unlock()
				}
			}
		}()
	}})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := r.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	mem := &run.Memory{}
	if _, err := r.Run(ctx, mem); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if len(mem.Samples) != 1 || mem.Samples[0].Load == nil {
		t.Fatalf("samples: %+v", mem.Samples)
	}
	tl := mem.Samples[0].Load.Timeline
	if len(seen) == 0 {
		t.Fatalf("no live reading with a complete second while the window ran\nlogs:\n%s", cl.logs)
	}
	for _, pr := range seen {
		if len(pr.Parts) != 2 {
			t.Fatalf("%d parts, want 2 (one per agent)", len(pr.Parts))
		}
		var req, sec int64
		for _, part := range pr.Parts {
			req += part.Requests
			if part.Second.T == pr.Second.T {
				sec += part.Second.Requests
			}
		}
		if req != pr.Requests {
			t.Errorf("merged requests %d, parts' sum %d", pr.Requests, req)
		}
		s := pr.Second
		if s.Requests != sec || s.Requests == 0 {
			t.Errorf("second %d: %d requests merged, parts' sum %d", s.T, s.Requests, sec)
		}
		if s.P50US < 1000 || s.P99US < s.P50US {
			t.Errorf("second %d: p50 %d µs, p99 %d µs; the server sleeps 1 ms", s.T, s.P50US, s.P99US)
		}
		if s.T >= len(tl) || s.Requests > tl[s.T].Requests {
			t.Errorf("live second %d has %d requests; the results file's timeline: %+v", s.T, s.Requests, tl)
		}
	}
}
