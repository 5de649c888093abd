package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"

	"github.com/benchrig/benchrig/internal/driver"
	httpdriver "github.com/benchrig/benchrig/internal/protocol/http/driver"
	"github.com/benchrig/benchrig/internal/result"
)

// TestPacedLoopsAtRate: a constant rate on a driver whose event loops pace
// runs on those loops (no dispatcher, no worker goroutines): every request
// of the schedule is accounted for (sent and answered, or dropped), the
// server sees exactly the completed ones, the constant schedule is counted
// exactly, each request's latency runs from its due time (at least its
// service time), and the schedule lag is recorded. Closed-loop windows on
// the same engine still work.
func TestPacedLoopsAtRate(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		_, _ = w.Write([]byte("ok\n"))
	}))
	t.Cleanup(srv.Close)
	for _, arrival := range []string{"constant", "poisson"} {
		drv, err := httpdriver.New(httpdriver.Config{URL: srv.URL + "/", Method: "GET", Timeout: 10 * time.Second, DialTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(Config{EngineConfig: result.EngineConfig{Connections: 4, Pipeline: 1, Rate: 2000, Arrival: arrival, Seed: 7}}, drv)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(e.loops) == 0 {
			t.Fatalf("%s: the rate runs on goroutines, not on the driver's pacing loops", arrival)
		}
		served.Store(0)
		res, err := e.Run(context.Background(), Window{Duration: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Rate
		if r == nil {
			t.Fatalf("%s: no rate figures", arrival)
		}
		if arrival == "constant" && r.Scheduled != 2000 {
			t.Errorf("constant: %d scheduled in 1 s at 2000/s, want 2000", r.Scheduled)
		}
		failed := res.Errors + res.Timeouts + res.Unexpected
		if got := res.Requests + failed + res.OutstandingAtEnd + r.Dropped; got != r.Scheduled {
			t.Errorf("%s: %d completed + %d failed + %d outstanding + %d dropped = %d, want the %d scheduled",
				arrival, res.Requests, failed, res.OutstandingAtEnd, r.Dropped, got, r.Scheduled)
		}
		if served.Load() < res.Requests {
			t.Errorf("%s: the server answered %d, the engine counts %d completed", arrival, served.Load(), res.Requests)
		}
		if r.Lag.Count == 0 || res.Service == nil || res.Latency.P(50) < res.Service.P(50) {
			t.Errorf("%s: lag %+v; latency p50 %d µs, service p50 %v", arrival, r.Lag, res.Latency.P(50), res.Service)
		}
		closed, err := e.Run(context.Background(), Window{Requests: 100})
		if err != nil || closed.Requests+closed.Errors == 0 {
			t.Errorf("%s: a count-bound window after the rate: %v, %+v", arrival, err, closed)
		}
		e.Close()
	}
}

// TestPacedWorkAllocatesNothing: in the steady state an open loop's work
// moves a due request to its backlog, hands it out and records its
// outcome without allocating.
func TestPacedWorkAllocatesNothing(t *testing.T) {
	e := &Engine{cfg: Config{EngineConfig: result.EngineConfig{Connections: 4, Pipeline: 1, Rate: 1e6}}}
	start := driver.Now()
	rec := newRecorder(start, 0, 1, true, &timeline{secs: map[int]*secondAgg{}})
	pw, err := e.newPacedWork(0, 1, Window{Duration: time.Hour}, start, rec, 1000)
	if err != nil {
		t.Fatal(err)
	}
	now := start
	step := func() {
		now += 1000 // one request due every µs
		pw.Due(now, 1)
		seq, ok := pw.Take(now)
		if !ok {
			t.Fatal("nothing to take")
		}
		_ = seq
		pw.Record(&driver.Outcome{Class: driver.OK, Done: now + 50_000, Bytes: 100}, now)
	}
	for range 5000 { // warm: the backlog, the map and the recorder's second
		step()
	}
	if n := testing.AllocsPerRun(2000, step); n != 0 {
		t.Errorf("%.2f allocations per request, want 0", n)
	}
}

// TestPacedClaimForFailures: a loop's failure paths claim through Claim:
// the oldest waiting request first, then the schedule's next, drawn early
// and counted as scheduled; 0 only once the schedule is over.
func TestPacedClaimForFailures(t *testing.T) {
	e := &Engine{cfg: Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1, Rate: 1000}}}
	start := driver.Now()
	rec := newRecorder(start, 0, 1, true, &timeline{secs: map[int]*secondAgg{}})
	pw, err := e.newPacedWork(0, 1, Window{Requests: 3}, start, rec, 10)
	if err != nil {
		t.Fatal(err)
	}
	pw.Due(start+int64(time.Millisecond), 0) // requests 0 and 1 due, no connection free
	for i, want := range []uint64{0, 1, 2} {
		if seq, k := pw.Claim(1); k != 1 || seq != want {
			t.Fatalf("claim %d: %d, %d; want request %d", i, seq, k, want)
		}
	}
	if _, k := pw.Claim(1); k != 0 {
		t.Errorf("a claim past the window's 3 requests was granted")
	}
	if pw.scheduled != 3 || pw.late != 2 {
		t.Errorf("scheduled %d, late %d; want 3 and 2", pw.scheduled, pw.late)
	}
}

// TestTimerSlackBatchesSends: with a timer slack a rate's sender wakes up
// to that long after a request fell due and sends every request due by
// then at once, on the HTTP/1.1 and HTTP/2 event loops and on the
// dispatcher alike: the schedule is kept (every request scheduled, and
// sent or accounted for) and the lag, measured, is what the slack allows
// (at 2000 req/s and 2 ms of slack, about 1 ms at the median; a busy
// machine only adds to it).
func TestTimerSlackBatchesSends(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	h2 := httptest.NewServer(h2c.NewHandler(h, &http2.Server{}))
	t.Cleanup(h2.Close)
	for _, c := range []struct {
		name  string
		drv   func() driver.Driver
		loops bool
	}{
		{"http/1.1 loops", func() driver.Driver {
			d, err := httpdriver.New(httpdriver.Config{URL: srv.URL + "/", Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			return d
		}, true},
		{"http/2 loops", func() driver.Driver {
			d, err := httpdriver.New(httpdriver.Config{URL: h2.URL + "/", H2C: true, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			return d
		}, true},
		{"dispatcher", func() driver.Driver { return &fakeDriver{} }, false},
	} {
		for _, slack := range []int64{0, 2000} {
			e, err := New(Config{EngineConfig: result.EngineConfig{Connections: 4, Pipeline: 1, Rate: 2000, TimerSlackUS: slack}}, c.drv())
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Open(context.Background()); err != nil {
				t.Fatal(err)
			}
			if (len(e.loops) > 0) != c.loops {
				t.Fatalf("%s: %d event loops", c.name, len(e.loops))
			}
			res, err := e.Run(context.Background(), Window{Duration: 500 * time.Millisecond})
			e.Close()
			if err != nil {
				t.Fatal(err)
			}
			r := res.Rate
			failed := res.Errors + res.Timeouts + res.Unexpected
			t.Logf("%s, slack %d µs: %d scheduled, %d ok, %d failed, %d dropped; lag p50 %d µs, p99 %d µs",
				c.name, slack, r.Scheduled, res.Requests, failed, r.Dropped, r.Lag.P(50), r.Lag.P(99))
			if r.Scheduled != 1000 || res.Requests+failed+res.OutstandingAtEnd+r.Dropped != r.Scheduled || failed != 0 {
				t.Errorf("%s, slack %d µs: %d scheduled (want 1000) = %d ok + %d failed + %d outstanding + %d dropped?",
					c.name, slack, r.Scheduled, res.Requests, failed, res.OutstandingAtEnd, r.Dropped)
			}
			if slack > 0 && r.Lag.P(50) < 300 {
				t.Errorf("%s: lag p50 %d µs with 2 ms of slack: the sends did not wait to leave together", c.name, r.Lag.P(50))
			}
		}
	}
}

// slackWake: a request due wakes its sender up to the slack later, but in
// the window's last slack no later than its end less the slack, and never
// before it is due.
func TestSlackWake(t *testing.T) {
	for _, c := range []struct{ due, s, end, want int64 }{
		{100, 0, 0, 100},
		{100, 0, 1000, 100},
		{100, 50, 0, 150},
		{100, 50, 1000, 150},
		{900, 50, 1000, 950},
		{920, 50, 1000, 950},
		{960, 50, 1000, 960},
		{999, 50, 1000, 999},
	} {
		if got := slackWake(c.due, c.s, c.end); got != c.want {
			t.Errorf("slackWake(due %d, slack %d, end %d) = %d, want %d", c.due, c.s, c.end, got, c.want)
		}
	}
}
