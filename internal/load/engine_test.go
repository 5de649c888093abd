package load

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/result"
)

// fakeDriver counts operations and can fail, stall or refuse on demand.
type fakeDriver struct {
	maxPipe  int
	delay    time.Duration
	ops      []string
	failEach int // every failEach-th op (by seq) is a 500
	breakAt  int64
	openErr  error

	done    atomic.Int64 // operations performed
	calls   atomic.Int64 // Do calls
	opens   atomic.Int64
	mu      sync.Mutex
	seqSeen map[uint64]int
}

func (d *fakeDriver) Name() string { return "fake" }
func (d *fakeDriver) Ops() []string {
	if d.ops != nil {
		return d.ops
	}
	return []string{"request"}
}
func (d *fakeDriver) MaxPipeline() int {
	if d.maxPipe == 0 {
		return 1
	}
	return d.maxPipe
}
func (d *fakeDriver) Open(ctx context.Context, w int) (driver.Conn, error) {
	d.opens.Add(1)
	if d.openErr != nil {
		return nil, d.openErr
	}
	return &fakeConn{d: d}, nil
}

type fakeConn struct {
	d      *fakeDriver
	closed atomic.Bool
}

func (c *fakeConn) Do(ctx context.Context, reqs []driver.Request, out []driver.Outcome) error {
	c.d.calls.Add(1)
	if c.d.delay > 0 {
		time.Sleep(c.d.delay)
	}
	var err error
	for i, r := range reqs {
		n := c.d.done.Add(1)
		c.d.mu.Lock()
		if c.d.seqSeen != nil {
			c.d.seqSeen[r.Seq]++
		}
		c.d.mu.Unlock()
		out[i] = driver.Outcome{Class: driver.OK, Bytes: 10, Done: driver.Now()}
		if len(c.d.ops) > 1 && r.Seq%2 == 1 {
			out[i].Op = 1
		}
		if c.d.failEach > 0 && int(r.Seq)%c.d.failEach == 0 {
			out[i].Class, out[i].Msg = driver.Unexpected, "status 500"
		}
		if c.d.breakAt > 0 && n == c.d.breakAt {
			out[i].Class, out[i].Msg = driver.Error, "connection reset by peer"
			err = errors.New("reset")
		}
	}
	return err
}
func (c *fakeConn) Close() error { c.closed.Store(true); return nil }

func run(t *testing.T, cfg Config, d *fakeDriver, w Window) (*Engine, func(Window) int64) {
	t.Helper()
	e, err := New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, func(w Window) int64 {
		res, err := e.Run(context.Background(), w)
		if err != nil {
			t.Fatal(err)
		}
		return res.Requests
	}
}

func TestRequestCountExact(t *testing.T) {
	cases := []struct {
		conns, pipe int
		n           int64
	}{
		{1, 1, 1}, {3, 1, 1000}, {7, 1, 1001}, {10, 16, 1000}, {10, 16, 1003}, {4, 64, 5}, {64, 1, 10},
	}
	for _, c := range cases {
		d := &fakeDriver{maxPipe: 128, seqSeen: map[uint64]int{}}
		_, runW := run(t, Config{EngineConfig: result.EngineConfig{Connections: c.conns, Pipeline: c.pipe}}, d, Window{})
		got := runW(Window{Requests: c.n})
		if got != c.n || d.done.Load() != c.n {
			t.Errorf("c=%d p=%d n=%d: recorded %d, performed %d", c.conns, c.pipe, c.n, got, d.done.Load())
		}
		for s := uint64(0); s < uint64(c.n); s++ {
			if d.seqSeen[s] != 1 {
				t.Fatalf("c=%d p=%d: seq %d performed %d times", c.conns, c.pipe, s, d.seqSeen[s])
			}
		}
		if len(d.seqSeen) != int(c.n) {
			t.Errorf("c=%d p=%d: %d distinct seqs, want %d", c.conns, c.pipe, len(d.seqSeen), c.n)
		}
	}
}

func TestPipelineBatches(t *testing.T) {
	d := &fakeDriver{maxPipe: 16}
	_, runW := run(t, Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 16}}, d, Window{})
	if got := runW(Window{Requests: 160}); got != 160 {
		t.Fatalf("recorded %d", got)
	}
	if d.calls.Load() != 10 {
		t.Errorf("160 requests pipelined 16 deep took %d Do calls, want 10", d.calls.Load())
	}
}

func TestDurationBoundAndWarmupExcluded(t *testing.T) {
	d := &fakeDriver{delay: time.Millisecond}
	e, _ := run(t, Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1}}, d, Window{})
	warm, err := e.Run(context.Background(), Window{Duration: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	before := d.done.Load()
	res, err := e.Run(context.Background(), Window{Duration: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if warm.Requests == 0 || res.Requests == 0 {
		t.Fatalf("warm-up %d, load %d requests", warm.Requests, res.Requests)
	}
	// What was still in flight at the deadline is outstanding at the
	// window's end, not a completed request of it.
	if res.Requests+res.OutstandingAtEnd != d.done.Load()-before {
		t.Errorf("load window recorded %d and %d outstanding at its end, but performed %d in it", res.Requests, res.OutstandingAtEnd, d.done.Load()-before)
	}
	if res.Seconds < 0.3 || res.Seconds > 0.6 {
		t.Errorf("300 ms window lasted %.3f s", res.Seconds)
	}
	if d.opens.Load() != 2 {
		t.Errorf("connections opened %d times, want 2 (kept across windows)", d.opens.Load())
	}
	if len(res.Timeline) == 0 || res.Timeline[0].Requests != res.Requests {
		t.Errorf("timeline %+v does not hold the %d requests", res.Timeline, res.Requests)
	}
}

func TestErrorsCountedByMessageAndReconnect(t *testing.T) {
	d := &fakeDriver{failEach: 10, breakAt: 55}
	e, _ := run(t, Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1}}, d, Window{})
	res, err := e.Run(context.Background(), Window{Requests: 100})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unexpected != 10 || res.Messages["unexpected: status 500"] != 10 {
		t.Errorf("unexpected = %d, messages %v", res.Unexpected, res.Messages)
	}
	if res.Errors != 1 || res.Messages["error: connection reset by peer"] != 1 {
		t.Errorf("errors = %d, messages %v", res.Errors, res.Messages)
	}
	if res.Requests != 89 || res.Sent != 100 {
		t.Errorf("requests %d sent %d, want 89 and 100", res.Requests, res.Sent)
	}
	if res.Reconnects != 1 || d.opens.Load() != 2 {
		t.Errorf("reconnects %d opens %d", res.Reconnects, d.opens.Load())
	}
}

func TestOpsCountedSeparately(t *testing.T) {
	d := &fakeDriver{ops: []string{"read", "write"}}
	e, _ := run(t, Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1}}, d, Window{})
	res, err := e.Run(context.Background(), Window{Requests: 101})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Ops) != 2 || res.Ops[0].Requests != 51 || res.Ops[1].Requests != 50 {
		t.Fatalf("ops %+v", res.Ops)
	}
	if res.Ops[0].Latency.Count != 51 {
		t.Errorf("read latency count %d", res.Ops[0].Latency.Count)
	}
}

func TestCancelInterrupts(t *testing.T) {
	d := &fakeDriver{delay: time.Millisecond}
	e, _ := run(t, Config{EngineConfig: result.EngineConfig{Connections: 4, Pipeline: 1}}, d, Window{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res, err := e.Run(ctx, Window{Duration: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Seconds > 2 || res.Requests == 0 {
		t.Errorf("interrupted=%v after %.2f s with %d requests", res.Interrupted, res.Seconds, res.Requests)
	}
}

func TestOpenFailureIsSetupError(t *testing.T) {
	e, err := New(Config{EngineConfig: result.EngineConfig{Connections: 3, Pipeline: 1}}, &fakeDriver{openErr: errors.New("connection refused")})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Open(context.Background()); err == nil || err.Error() != "open connection 1 of 3: connection refused" {
		t.Errorf("Open: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []Config{
		{EngineConfig: result.EngineConfig{Connections: 0, Pipeline: 1}},
		{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 0}},
		{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1, Rate: -1}},
		{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1, Rate: 10, Arrival: "burst"}},
		{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1, Rate: 10, MaxBacklog: -1}},
		{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1, Rate: 10, TimerSlackUS: -1}},
		{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1, Rate: 10, TimerSlackUS: 10_001}},
		{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1, TimerSlackUS: 100}}, // no rate
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: want error", c)
		}
	}
	if _, err := New(Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 4}}, &fakeDriver{}); err == nil {
		t.Error("pipeline beyond the driver's maximum: want error")
	}
	// several in flight per connection at a rate: only a driver whose loops
	// pace streams (driver.StreamPacer, HTTP/2) takes it
	if _, err := New(Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 2, Rate: 10}}, &fakeDriver{maxPipe: 4}); err == nil ||
		!strings.Contains(err.Error(), "pipeline 2 cannot be combined with a rate for the fake driver") {
		t.Errorf("pipeline 2 at a rate, a driver that paces no streams: got %v", err)
	}
	for _, w := range []Window{{}, {Duration: -time.Second}, {Requests: -1}} {
		if err := w.Validate(); err == nil {
			t.Errorf("%+v: want error", w)
		}
	}
}

// TestSaturationCountsWorkers: one connection can keep at most one core
// busy, so the usable cores of a one-connection window are 1 whatever the
// machine.
func TestSaturationCountsWorkers(t *testing.T) {
	e, _ := run(t, Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1}}, &fakeDriver{}, Window{})
	res, err := e.Run(context.Background(), Window{Requests: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Client.UsableCores != 1 {
		t.Errorf("usable cores %d with one connection, want 1", res.Client.UsableCores)
	}
}
