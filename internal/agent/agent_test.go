package agent

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/testenv"

	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/system/attach"
)

func init() { system.Register(suite.KindAddress, attach.NewAddress) }

// countingServer is a real HTTP server on 127.0.0.1 that counts each path
// it is asked for.
type countingServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths map[string]int
}

func newCountingServer(t *testing.T) *countingServer {
	cs := &countingServer{paths: map[string]int{}}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.mu.Lock()
		cs.paths[r.URL.Path]++
		cs.mu.Unlock()
		_, _ = w.Write([]byte("ok\n"))
	}))
	t.Cleanup(cs.Close)
	return cs
}

func (cs *countingServer) counts() map[string]int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	out := map[string]int{}
	for k, v := range cs.paths {
		out[k] = v
	}
	return out
}

func (cs *countingServer) total() int {
	n := 0
	for _, v := range cs.counts() {
		n += v
	}
	return n
}

// indexedSuite is a suite whose http path cycles through n distinct URLs
// (/r/0 … /r/n-1), so request seq asks for /r/seq: the server sees which
// indexes came. Its load window is bounded by n requests.
func indexedSuite(url string, n int, rate string, conns int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: agents-test\nseed: 1\nrepeats: 1\nrequests: %d\n", n)
	b.WriteString("phases: {baseline: 0s, warmup: 0s, settle: 0s, load: 60s, recovery: 0s}\n")
	b.WriteString("thresholds: {coverage: 0, p99: 10s}\n")
	fmt.Fprintf(&b, "targets:\n  srv:\n    address: {addr: %q}\n    checks: [{url: %q, status: 200}]\n", strings.TrimPrefix(url, "http://"), url+"/probe")
	b.WriteString("paths:\n  idx:\n    http:\n      url: \"" + url + "/probe\"\n      requests:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "        - {url: \"%s/r/%d\"}\n", url, i)
	}
	fmt.Fprintf(&b, "matrix:\n  targets: [srv]\n  paths: [idx]\n  connections: [%d]\n", conns)
	if rate != "" {
		fmt.Fprintf(&b, "  rates: [%s]\n", rate)
	}
	return b.String()
}

// cluster is a coordinator and its agents, in this process.
type cluster struct {
	coord   *Coordinator
	cancels []context.CancelFunc
	errs    chan error
	logs    *logBuf
}

type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.b, format+"\n", args...)
}

func (l *logBuf) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

var testToken, _ = NewToken([]byte("0123456789abcdef-test-token"))

var (
	patientOnce sync.Once
	patientT    Timings
)

// patient is the timings every test's coordinator and agents use: the
// dead-man from this machine's measured scheduling delay and load
// (testenv.Patience; the default on a quiet machine), the agent timeout
// three times that. A starved process must not be taken for a lost one.
func patient(t testing.TB) Timings {
	patientOnce.Do(func() {
		p := testenv.Patience(DeadMan, 20*time.Second)
		patientT = Timings{DeadMan: p, AgentTimeout: 3 * p}
	})
	t.Logf("dead-man %s, agent timeout %s", patientT.DeadMan, patientT.AgentTimeout)
	return patientT
}

// startCluster starts a coordinator for n agents and the agents, and waits
// for them to join with the suite.
func startCluster(t *testing.T, n int, s *suite.Suite) *cluster {
	t.Helper()
	logs := &logBuf{}
	coord, err := NewCoordinator(CoordinatorConfig{Agents: n, Token: testToken, Timings: patient(t), JoinFor: patient(t).AgentTimeout + time.Minute, Logf: logs.logf})
	if err != nil {
		t.Fatal(err)
	}
	if err := coord.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	cl := &cluster{coord: coord, errs: make(chan error, n), logs: logs}
	for i := 0; i < n; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		cl.cancels = append(cl.cancels, cancel)
		idx := i // agents ask for their index, as an Indexed Job's do
		go func() {
			cl.errs <- Run(ctx, Config{Coordinator: coord.Addr(), Index: idx, Token: testToken, Timings: patient(t), DialFor: 10 * time.Second, Logf: logs.logf})
		}()
	}
	t.Cleanup(func() {
		coord.Close()
		for _, c := range cl.cancels {
			c()
		}
	})
	resolved, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	if err := coord.Wait(context.Background(), resolved, false); err != nil {
		t.Fatal(err)
	}
	return cl
}

func runPlan(t *testing.T, s *suite.Suite, coord *Coordinator) []*result.Sample {
	t.Helper()
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	r := run.NewRunner(p, run.PlanOptions{Executor: coord.Executor()})
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
	return mem.Samples
}

// TestEveryIndexSentOnce runs a 900-request window over 3 agents, closed
// loop, at a constant rate, and at that rate with 1 ms of timer slack: the
// server saw each of the 900 request indexes exactly once (at most once,
// the rest counted as dropped, when a starved agent dropped sends), and
// the merged figures are the sums of the parts; the agents' sends waited
// for the slack (their merged lag).
func TestEveryIndexSentOnce(t *testing.T) {
	for _, c := range []struct{ rate, slack string }{{"", ""}, {"3000", ""}, {"3000", "1ms"}} {
		rate := c.rate
		srv := newCountingServer(t)
		const n = 900
		src := indexedSuite(srv.URL, n, rate, 7)
		if c.slack != "" {
			src = "timer_slack: " + c.slack + "\n" + src
			rate += " with slack " + c.slack
		}
		s, err := suite.Parse("test", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		cl := startCluster(t, 3, s)
		samples := runPlan(t, s, cl.coord)
		if len(samples) != 1 {
			t.Fatalf("%d samples", len(samples))
		}
		smp := samples[0]
		if smp.Error != "" || smp.Load == nil {
			t.Fatalf("rate %q: sample failed: %s\nlogs:\n%s", rate, smp.Error, cl.logs)
		}
		got := srv.counts()
		delete(got, "/probe") // the coordinator's pre- and post-check
		// At a constant rate a starved agent may drop sends (counted): each
		// index then comes at most once, and every one is answered or
		// dropped. Closed loop, or nothing dropped: each exactly once.
		var dropped int64
		if smp.Load.Rate != nil {
			dropped = smp.Load.Rate.Dropped
		}
		for i := 0; i < n; i++ {
			if c := got[fmt.Sprintf("/r/%d", i)]; c > 1 || (c == 0 && dropped == 0) {
				t.Fatalf("rate %q: index %d sent %d times (%d dropped)", rate, i, c, dropped)
			}
		}
		if int64(len(got))+dropped != n {
			t.Errorf("rate %q: server saw %d paths, %d dropped, want %d in all", rate, len(got), dropped, n)
		}
		if smp.Load.Requests+dropped != n || smp.Load.Latency.Count != smp.Load.Requests {
			t.Errorf("rate %q: merged %d requests, %d dropped, %d latencies, want %d", rate, smp.Load.Requests, dropped, smp.Load.Latency.Count, n)
		}
		if len(smp.Agents) != 3 {
			t.Fatalf("rate %q: %d agent parts", rate, len(smp.Agents))
		}
		var sum int64
		conns := 0
		for _, a := range smp.Agents {
			sum += a.Requests
			conns += a.Connections
			if a.Error != "" {
				t.Errorf("agent %d: %s", a.Agent, a.Error)
			}
		}
		if sum != smp.Load.Requests || conns != 7 || smp.Load.Connections != 7 {
			t.Errorf("rate %q: parts sum to %d requests and %d connections (merged %d)", rate, sum, conns, smp.Load.Connections)
		}
		var tl int64
		for _, sec := range smp.Load.Timeline {
			tl += sec.Requests
		}
		if tl != smp.Load.Requests {
			t.Errorf("rate %q: merged timeline sums to %d, want %d", rate, tl, smp.Load.Requests)
		}
		if rate != "" && (smp.Load.Rate == nil || smp.Load.Rate.Target != 3000 || smp.Load.Rate.Scheduled != n) {
			t.Fatalf("rate %q: merged rate figures %+v", rate, smp.Load.Rate)
		}
		if smp.Load.Rate != nil {
			t.Logf("rate %q: merged lag p50 %d µs, p99 %d µs", rate, smp.Load.Rate.Lag.P(50), smp.Load.Rate.Lag.P(99))
		}
		// 1 ms of slack: a batch's first send waits about that long after it
		// fell due, so the median lag is hundreds of µs (tens without)
		if c.slack != "" {
			if smp.Config.Engine.TimerSlackUS != 1000 || smp.Load.Rate.Lag.P(50) < 300 {
				t.Errorf("rate %q: recorded slack %d µs, merged lag p50 %d µs: the agents did not batch their sends",
					rate, smp.Config.Engine.TimerSlackUS, smp.Load.Rate.Lag.P(50))
			}
		}
	}
}

// TestWrongTokenRefused: an agent with another token is refused, the
// refusal is logged, and the token is in no log line.
func TestWrongTokenRefused(t *testing.T) {
	logs := &logBuf{}
	coord, err := NewCoordinator(CoordinatorConfig{Agents: 1, Token: testToken, Timings: patient(t), Logf: logs.logf})
	if err != nil {
		t.Fatal(err)
	}
	if err := coord.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer coord.Close()
	go func() { _ = coord.Wait(context.Background(), []byte(`{}`), false) }()
	bad, _ := NewToken([]byte("another-token-of-16-bytes"))
	err = Run(context.Background(), Config{Coordinator: coord.Addr(), Index: -1, Token: bad, DialFor: 5 * time.Second, Logf: logs.logf})
	if err == nil {
		t.Fatal("an agent with a wrong token joined")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "refused agent from") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "wrong token") {
		t.Errorf("refusal not logged: %q", logs.String())
	}
	for _, secret := range []string{"0123456789abcdef-test-token", "another-token-of-16-bytes"} {
		if strings.Contains(logs.String()+err.Error(), secret) {
			t.Errorf("a token reached the logs or the error")
		}
	}
	if coord.count() != 0 {
		t.Errorf("%d agents joined", coord.count())
	}
}
