package load

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/result"
)

func TestRateScheduleAndCoverage(t *testing.T) {
	d := &fakeDriver{}
	e, _ := run(t, Config{EngineConfig: result.EngineConfig{Connections: 4, Pipeline: 1, Rate: 1000}}, d, Window{})
	res, err := e.Run(context.Background(), Window{Duration: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rate == nil || res.Service == nil {
		t.Fatal("rate figures missing")
	}
	// Every scheduled request is sent or dropped (one a worker takes up
	// only after the deadline, on a loaded machine, is never sent), and
	// every one sent completed or was outstanding at the window's end.
	r := res.Rate
	if r.Scheduled != 500 || res.Sent+r.Dropped != r.Scheduled || res.Requests+res.OutstandingAtEnd != res.Sent {
		t.Errorf("scheduled %d = sent %d (%d completed, %d outstanding at the end) + dropped %d?", r.Scheduled, res.Sent, res.Requests, res.OutstandingAtEnd, r.Dropped)
	}
	if want := float64(res.Requests) / 5; math.Abs(r.Coverage-want) > 1e-9 {
		t.Errorf("coverage %.2f %%, want %d of 500 = %.2f %%", r.Coverage, res.Requests, want)
	}
	if r.Lag.Count != res.Sent {
		t.Errorf("lag recorded %d times for %d sends", r.Lag.Count, res.Sent)
	}
	if res.Seconds != 0.5 {
		t.Errorf("a 500 ms window recorded %v s", res.Seconds)
	}
}

func TestRateCountBound(t *testing.T) {
	d := &fakeDriver{}
	e, _ := run(t, Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1, Rate: 2000}}, d, Window{})
	res, err := e.Run(context.Background(), Window{Requests: 300})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 300 || d.done.Load() != 300 {
		t.Errorf("completed %d performed %d, want 300", res.Requests, d.done.Load())
	}
	if res.Rate.Coverage < 99.9 || res.Rate.Coverage > 100.1 {
		t.Errorf("coverage %.2f", res.Rate.Coverage)
	}
}

// A target slower than the rate: one connection at 5 ms per request can do
// 200/s of the 1000/s asked. The backlog (10) fills; the rest are dropped,
// counted, and the corrected latency exceeds the service time.
func TestRateBacklogBoundedDrops(t *testing.T) {
	d := &fakeDriver{delay: 5 * time.Millisecond}
	e, _ := run(t, Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1, Rate: 1000, MaxBacklog: 10}}, d, Window{})
	res, err := e.Run(context.Background(), Window{Duration: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rate
	if r.Dropped == 0 || r.Late == 0 {
		t.Fatalf("dropped %d late %d, want both > 0", r.Dropped, r.Late)
	}
	if r.Scheduled != 400 || res.Sent+r.Dropped != r.Scheduled {
		t.Errorf("scheduled %d = sent %d + dropped %d?", r.Scheduled, res.Sent, r.Dropped)
	}
	if r.Coverage > 50 {
		t.Errorf("coverage %.1f %%, want well under 100", r.Coverage)
	}
	if res.Latency.P(99) <= res.Service.P(99) {
		t.Errorf("corrected p99 %d µs should exceed service p99 %d µs", res.Latency.P(99), res.Service.P(99))
	}
}

func TestPoissonRateReproducibleCount(t *testing.T) {
	count := func() int64 {
		d := &fakeDriver{}
		e, _ := run(t, Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1, Rate: 2000, Arrival: "poisson", Seed: 7}}, d, Window{})
		res, err := e.Run(context.Background(), Window{Duration: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return res.Rate.Scheduled
	}
	a, b := count(), count()
	if a != b {
		t.Errorf("same seed scheduled %d then %d", a, b)
	}
	if a < 500 || a > 700 {
		t.Errorf("scheduled %d in 0.3 s at 2000/s", a)
	}
}

// TestRateBounds: rates outside [MinRate, MaxRate] are refused where the
// config is validated, with the range in the message, instead of a nil
// pacer panicking mid-window (-R 0.0001) or a backlog of rate × 1 s
// exhausting memory (-R 1e12).
func TestRateBounds(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		ok   bool
	}{
		{0.001, true}, {0.0015, true}, {1, true}, {2.5, true}, {1e7, true},
		{0.0001, false}, {0.0004, false}, {1e7 + 1, false}, {1e12, false}, {1e308, false},
		{math.Inf(1), false}, {math.NaN(), false}, {-1, false},
	} {
		cfg := Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1, Rate: tc.rate}}
		err := cfg.Validate()
		if tc.ok != (err == nil) {
			t.Errorf("rate %v: Validate = %v, want ok %v", tc.rate, err, tc.ok)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), "0.001 ≤ rate ≤ 1e+07") {
			t.Errorf("rate %v: %q does not state the bound", tc.rate, err)
		}
		_, perr := NewConstantPacer(tc.rate)
		_, qerr := NewPoissonPacer(tc.rate, 1)
		if (perr == nil) != tc.ok || (qerr == nil) != tc.ok {
			t.Errorf("rate %v: pacers say %v, %v; want ok %v", tc.rate, perr, qerr, tc.ok)
		}
	}
	if _, err := New(Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1, Rate: 0.0001}}, &fakeDriver{}); err == nil {
		t.Error("New accepted rate 0.0001")
	}
	if err := (&Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1, Rate: 10, MaxBacklog: MaxBacklog + 1}}).Validate(); err == nil {
		t.Error("Validate accepted a backlog above MaxBacklog")
	}
}

func TestConstantPacerCountBefore(t *testing.T) {
	for _, rate := range []float64{0.001, 2.5, 3, 1000, 7919, 1e7} {
		p, _ := NewConstantPacer(rate)
		for _, d := range []int64{0, 1, 333_333_333, 333_333_334, 1e9, 1e9 + 1, 7e9} {
			var want uint64
			for i := uint64(0); p.Due(i) < d; i++ {
				want++
				if want > 1e8 {
					break
				}
			}
			if got := p.CountBefore(d); got != want {
				t.Errorf("rate %v: CountBefore(%d) = %d, want %d", rate, d, got, want)
			}
		}
	}
}

// TestBacklogGrowsOnDemand: the overflow part of the backlog starts empty,
// grows by doubling as tickets wait, and refuses beyond its limit; FIFO
// order holds across growth and wrap-around. The handoff channel is at most
// handoffCap.
func TestBacklogGrowsOnDemand(t *testing.T) {
	q := newOverflow(MaxBacklog - handoffCap)
	if len(q.buf) != 0 {
		t.Fatalf("a new overflow holds %d slots, want none", len(q.buf))
	}
	for i := 0; i < 100; i++ {
		q.push(ticket{seq: uint64(i)})
	}
	if c := len(q.buf); c != 128 {
		t.Errorf("100 tickets: capacity %d, want 128", c)
	}
	for want := uint64(0); want < 100; want++ {
		if got := q.front(); got.seq != want {
			t.Fatalf("front = %d, want %d", got.seq, want)
		}
		q.pop()
	}
	small := newOverflow(3)
	for i := 0; i < 3; i++ {
		if !small.push(ticket{seq: uint64(i)}) {
			t.Fatalf("push %d refused", i)
		}
	}
	if small.push(ticket{seq: 9}) {
		t.Error("a full overflow accepted a ticket")
	}
	small.pop()
	small.push(ticket{seq: 3}) // wraps around
	for want := uint64(1); want <= 3; want++ {
		if got := small.front(); got.seq != want {
			t.Errorf("front = %d; want %d", got.seq, want)
		}
		small.pop()
	}
	if newOverflow(-5).push(ticket{}) {
		t.Error("an overflow of no room accepted a ticket")
	}
}

// TestRateBacklogBeyondHandoff: a slow target and a backlog larger than the
// handoff channel: requests queue in the overflow, in order, and are all
// served (none dropped) once the target catches up.
func TestRateBacklogBeyondHandoff(t *testing.T) {
	d := &fakeDriver{delay: 200 * time.Millisecond, seqSeen: map[uint64]int{}}
	e, _ := run(t, Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1, Rate: 20000, MaxBacklog: 3000}}, d, Window{})
	res, err := e.Run(context.Background(), Window{Requests: 2000})
	if err != nil {
		t.Fatal(err)
	}
	// One connection at 200 ms a request serves a handful; the rest wait
	// past handoffCap in the overflow until the grace ends the window.
	if res.Rate.Scheduled != 2000 || res.Sent+res.Rate.Dropped > 2000 || res.Rate.Late < handoffCap {
		t.Errorf("scheduled %d, sent %d, dropped %d, late %d", res.Rate.Scheduled, res.Sent, res.Rate.Dropped, res.Rate.Late)
	}
	if res.Rate.Dropped < 2000-handoffCap-50 {
		t.Errorf("dropped %d: the overflow beyond the %d-ticket channel did not hold its tickets", res.Rate.Dropped, handoffCap)
	}
}

// TestRateAboveDispatcherSpeedEnds: at 10⁷ requests per second the
// dispatcher cannot keep up; the window still ends (it used to run for
// minutes), and every request due in the window is either sent or counted
// as dropped.
func TestRateAboveDispatcherSpeedEnds(t *testing.T) {
	d := &fakeDriver{}
	e, _ := run(t, Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1, Rate: MaxRate}}, d, Window{})
	res, err := e.Run(context.Background(), Window{Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rate
	if r.Scheduled != 1_000_000 {
		t.Errorf("scheduled %d, want the 10⁶ due in 100 ms", r.Scheduled)
	}
	if res.Sent+r.Dropped != r.Scheduled {
		t.Errorf("sent %d + dropped %d != scheduled %d", res.Sent, r.Dropped, r.Scheduled)
	}
	t.Logf("10⁷/s for 100 ms: %d scheduled, %d sent, %d dropped, window %.3f s", r.Scheduled, res.Sent, r.Dropped, res.Seconds)
	if r.MaxBacklog != MaxBacklog {
		t.Errorf("backlog cap %d, want MaxBacklog", r.MaxBacklog)
	}
}

// silentDriver's connections never answer, whatever the context: a silent
// server with no per-request timeout. Do returns only when the connection
// is closed.
type silentDriver struct{ fakeDriver }

func (d *silentDriver) Open(ctx context.Context, w int) (driver.Conn, error) {
	return &silentConn{closed: make(chan struct{})}, nil
}

type silentConn struct {
	once   sync.Once
	closed chan struct{}
}

func (c *silentConn) Do(ctx context.Context, reqs []driver.Request, out []driver.Outcome) error {
	<-c.closed
	return errors.New("closed")
}
func (c *silentConn) Close() error { c.once.Do(func() { close(c.closed) }); return nil }

// TestRateWindowEndsDespiteSilentServer: requests in flight at the end of
// the window are outstanding at its end, and aborted after DrainGrace, so
// the window ends even against a server that never answers and with no
// request timeout.
func TestRateWindowEndsDespiteSilentServer(t *testing.T) {
	e, err := New(Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1, Rate: 100}}, &silentDriver{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Run(context.Background(), Window{Duration: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 0 || res.Rate.Scheduled != 5 {
		t.Errorf("completed %d of %d scheduled; want 0 of 5", res.Requests, res.Rate.Scheduled)
	}
	// Two requests in flight (outstanding at the end, then aborted),
	// three waiting (dropped); on a loaded machine a worker may not have
	// taken its ticket yet.
	if d := res.Rate.Dropped; d < 3 || d > 5 || res.Sent != res.OutstandingAtEnd || res.Sent+d != 5 {
		t.Errorf("sent %d (%d outstanding at the end), dropped %d; want the ≤ 2 sent outstanding and the 3 to 5 still waiting dropped", res.Sent, res.OutstandingAtEnd, d)
	}
	if res.Seconds != 0.05 {
		t.Errorf("a 50 ms window recorded %v s", res.Seconds)
	}
}

// BenchmarkRateDispatch runs 200 ms windows at 10⁶ requests per second over
// four connections of a no-op driver and reports the dispatcher's schedule
// lag (p99, µs) and the share of due requests it could not send.
func BenchmarkRateDispatch(b *testing.B) {
	e, err := New(Config{EngineConfig: result.EngineConfig{Connections: 4, Pipeline: 1, Rate: 1e6}}, &fakeDriver{})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Open(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	var lag, dropped float64
	for b.Loop() {
		res, err := e.Run(context.Background(), Window{Duration: 200 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		lag = max(lag, float64(res.Rate.Lag.P(99)))
		dropped = max(dropped, float64(res.Rate.Dropped)/float64(res.Rate.Scheduled))
	}
	b.ReportMetric(lag, "lag-p99-µs")
	b.ReportMetric(dropped*100, "dropped-%")
}

// TestRateBelowOnePerSecond: a rate below one request per second gives a
// window of the whole duration and a coverage counted against the requests
// the schedule holds (0.9/s for 1.5 s: due at 0 s and 1.11 s, 2 requests),
// not against rate × seconds (1.35) (issue 26, item 4).
func TestRateBelowOnePerSecond(t *testing.T) {
	d := &fakeDriver{}
	e, _ := run(t, Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1, Rate: 0.9}}, d, Window{})
	res, err := e.Run(context.Background(), Window{Duration: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Seconds != 1.5 {
		t.Errorf("a 1.5 s window recorded %v s", res.Seconds)
	}
	if res.Rate.Scheduled != 2 || res.Requests != 2 {
		t.Errorf("%d of %d scheduled requests completed, want 2 of 2", res.Requests, res.Rate.Scheduled)
	}
	if res.Rate.Coverage != 100 {
		t.Errorf("coverage %.1f %%, want 100", res.Rate.Coverage)
	}
}
