package load

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/result"
)

// Engine drives N connections of one driver. Open it once, run as many
// windows as the measurement has (warm-up, then load), close it.
type Engine struct {
	cfg   Config
	drv   driver.Driver
	ops   []string
	conns []driver.Conn
	loops []driver.Loop // set instead of conns when the driver multiplexes
	// causes[w] is why worker w's last connection ended (a Cause of
	// package driver), counted when it is reopened. Only worker w's
	// goroutine touches its entry.
	causes []string

	// progress counters of the window in flight, read by Progress.
	prog      progress
	running   atomic.Bool
	closeOnce sync.Once
	mu        sync.Mutex // guards conns during reconnects and Close
	closed    bool
	lastWindow
}

type progress struct {
	start    atomic.Int64
	until    atomic.Int64 // planned end (driver.Now()), 0 if count-bound only
	requests atomic.Int64
	failures atomic.Int64
	misses   atomic.Int64
	// tl is the window in flight's timeline, for its last complete second.
	tl atomic.Pointer[timeline]
}

// Progress is a snapshot of the window in flight, for a live status line
// or page.
type Progress struct {
	Running  bool
	Elapsed  time.Duration
	Planned  time.Duration // 0 when the window is bounded by count only
	Requests int64
	Failures int64
	// Misses are the answers without a value (a cache miss).
	Misses int64
	// Second is the window's last complete second so far (Second.T < 0
	// when none has ended yet).
	Second LiveSecond
	// ClientCPU is, for a distributed run's agent, its process's
	// cumulative user+system CPU seconds (0 from a local engine: its
	// process is the reader's own).
	ClientCPU float64
	// Parts are the shares of a distributed run's agents, in agent
	// order (nil for a local engine); Agent is a part's agent index.
	Parts []Progress `json:"-"`
	Agent int        `json:"-"`
}

// LiveSecond is one second of the window in flight as the workers have
// handed it over so far: a worker hands a second over when it records its
// first outcome of a later one, so a live reading just after the second
// ends may miss a busy worker's last outcomes (the results file has them
// all).
type LiveSecond struct {
	T        int   `json:"t"`
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	P50US    int64 `json:"p50_us"`
	P99US    int64 `json:"p99_us"`
	// Buckets is the second's latency histogram as SparseBuckets gives
	// it, for a lossless merge of several engines' seconds.
	Buckets []int64 `json:"buckets,omitempty"`
}

// Watched is what a live view reads of a sample's load once a second: a
// local *Engine, or a coordinator's handle on its agents.
type Watched interface {
	Progress() Progress
}

var _ Watched = (*Engine)(nil)

// New returns an engine; it opens no connection yet.
func New(cfg Config, drv driver.Driver) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Pipeline > drv.MaxPipeline() {
		return nil, fmt.Errorf("pipeline %d: the %s driver accepts at most %d", cfg.Pipeline, drv.Name(), drv.MaxPipeline())
	}
	if sp, ok := drv.(driver.StreamPacer); cfg.Rate > 0 && cfg.Pipeline > 1 && (!ok || !sp.PacesStreams()) {
		return nil, fmt.Errorf("pipeline %d cannot be combined with a rate for the %s driver: at a rate each request is sent when due on a connection with none in flight; only HTTP/2's streams keep several in flight at a rate", cfg.Pipeline, drv.Name())
	}
	ops := drv.Ops()
	if len(ops) == 0 {
		ops = []string{"request"}
	}
	return &Engine{cfg: cfg, drv: drv, ops: ops}, nil
}

// Open opens every connection. Any failure is a setup error: the connections
// opened so far are closed.
func (e *Engine) Open(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := checkFDs(e.cfg.Connections); err != nil {
		return err
	}
	if ok, err := e.openLoops(ctx); ok {
		return err
	}
	if e.cfg.Rate > 0 && e.cfg.Pipeline > 1 {
		// only the loops pace streams; a goroutine per connection would
		// send one request at a time
		return fmt.Errorf("pipeline %d at a rate: the %s driver's event loops pace several requests per connection, and they could not be opened here (Linux only)", e.cfg.Pipeline, e.drv.Name())
	}
	for i := 0; i < e.cfg.Connections; i++ {
		c, err := e.drv.Open(ctx, i)
		if err != nil {
			for _, c := range e.conns {
				_ = c.Close()
			}
			e.conns = nil
			return fmt.Errorf("open connection %d of %d: %w%s", i+1, e.cfg.Connections, err, fdHint(err, e.cfg.Connections))
		}
		e.conns = append(e.conns, c)
	}
	e.causes = make([]string, len(e.conns))
	return nil
}

// fdSpare is how many file descriptors beyond the connections a run needs:
// the ones open now are counted, this covers what the sampler, the target's
// logs and the results file open later.
const fdSpare = 64

// Close closes every connection. It is idempotent and may be called while a
// window runs to abort it.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.closed = true
		for _, l := range e.loops {
			_ = l.Close()
		}
		for _, c := range e.conns {
			if c != nil {
				_ = c.Close()
			}
		}
	})
	return nil
}

// Progress returns a snapshot of the window in flight.
func (e *Engine) Progress() Progress {
	p := Progress{Running: e.running.Load(), Requests: e.prog.requests.Load(), Failures: e.prog.failures.Load(),
		Misses: e.prog.misses.Load(), Second: LiveSecond{T: -1}}
	if s := e.prog.start.Load(); s != 0 {
		p.Elapsed = time.Duration(driver.Now() - s)
		if u := e.prog.until.Load(); u != 0 {
			p.Planned = time.Duration(u - s)
		}
	}
	if tl := e.prog.tl.Load(); tl != nil && p.Running {
		p.Second = tl.live(int(p.Elapsed/time.Second) - 1)
	}
	return p
}

// parallelism is how many cores a window can keep busy: the client's usable
// cores, but no more than its event loops, or its workers (plus the
// dispatcher at a constant rate). A client that uses 90 % of this is
// saturated.
func (e *Engine) parallelism() int {
	n := UsableCores()
	switch {
	case e.loops != nil:
		return min(n, len(e.loops))
	case e.cfg.Rate > 0:
		return min(n, e.cfg.Connections+1)
	default:
		return min(n, e.cfg.Connections)
	}
}

// conn returns worker w's connection, reopening it if a previous operation
// left it unusable.
func (e *Engine) conn(ctx context.Context, w int, rec *recorder) (driver.Conn, error) {
	e.mu.Lock()
	c, closed := e.conns[w], e.closed
	e.mu.Unlock()
	if closed {
		return nil, errEngineClosed
	}
	if c != nil {
		return c, nil
	}
	c, err := e.drv.Open(ctx, w)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		_ = c.Close()
		return nil, errEngineClosed
	}
	e.conns[w] = c
	rec.reconnected(e.causes[w])
	e.causes[w] = ""
	return c, nil
}

// drop closes worker w's connection; cause says why it ended (counted when
// it is reopened).
func (e *Engine) drop(w int, cause string) {
	e.causes[w] = cause
	e.abort(w)
}

// abort closes connection w (a Do in flight on it returns at once) without
// recording a reconnect cause: another goroutine ends the window.
func (e *Engine) abort(w int) {
	e.mu.Lock()
	c := e.conns[w]
	e.conns[w] = nil
	e.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

var errEngineClosed = errors.New("engine closed")

// Run drives one window and returns what it measured. Cancelling ctx aborts
// the window: connections are closed, and the figures of every finished
// operation are returned with Interrupted set. Run with record=false is a
// warm-up: the same load, nothing kept but the error count.
func (e *Engine) Run(ctx context.Context, w Window) (*result.Load, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if e.conns == nil && e.loops == nil {
		return nil, errors.New("engine: Run before Open")
	}
	if !e.running.CompareAndSwap(false, true) {
		return nil, errors.New("engine: a window is already running")
	}
	defer e.running.Store(false)

	// Cancellation closes the connections so that blocked reads return.
	stop := context.AfterFunc(ctx, func() { _ = e.Close() })
	defer stop()

	cpu0 := readRusage()
	driver.TakeCoalesced() // the window's own, from here
	wallStart := time.Now()
	start := driver.Now()
	e.prog.start.Store(start)
	e.prog.requests.Store(0)
	e.prog.failures.Store(0)
	e.prog.misses.Store(0)
	var deadline int64
	if w.Duration > 0 {
		deadline = start + int64(w.Duration)
		e.prog.until.Store(deadline)
	} else {
		e.prog.until.Store(0)
	}

	tl := &timeline{secs: map[int]*secondAgg{}}
	e.prog.tl.Store(tl)
	nrec := len(e.conns)
	if e.loops != nil {
		nrec = len(e.loops) // one goroutine drives each loop's connections
	}
	recs := make([]*recorder, nrec)
	for i := range recs {
		recs[i] = newRecorder(start, deadline, len(e.ops), e.cfg.Rate > 0, tl)
	}
	var rs *rateState
	switch {
	case e.loops != nil && e.cfg.Rate > 0:
		var err error
		if rs, err = e.runPacedLoops(ctx, w, start, deadline, recs); err != nil {
			return nil, err
		}
	case e.loops != nil:
		if err := e.runLoops(ctx, w, deadline, recs); err != nil {
			return nil, err
		}
	case e.cfg.Rate > 0:
		rs = e.runRate(ctx, w, start, deadline, recs)
	default:
		e.runClosed(ctx, w, start, deadline, recs)
	}
	end := driver.Now()
	if deadline != 0 && end > deadline {
		// The window is what its duration says: what was still in
		// flight at the deadline is counted as outstanding, not waited
		// for (it ended within DrainGrace after it).
		end = deadline
	}
	cpu1 := readRusage()

	res, err := e.merge(recs, tl, start, end)
	if err != nil {
		return nil, err
	}
	e.keep(tl)
	res.Start = wallStart.UTC()
	res.End = wallStart.Add(time.Duration(end - start)).UTC()
	res.Interrupted = ctx.Err() != nil
	if rs != nil {
		for _, r := range recs {
			rs.dropped += r.unsent
		}
		if err := rs.finish(res, w); err != nil {
			return nil, err
		}
	}
	// the loops of a closed loop busy-poll (driver.SetBusyPoll)
	polled := e.loops != nil && e.cfg.Rate == 0 && driver.BusyPoll() > 0
	res.Client = clientFigures(cpu0, cpu1, res.Seconds, res.Requests, e.parallelism(), polled)
	switch {
	case e.loops == nil:
	case cpu1.rings > cpu0.rings:
		res.Client.IO = "io_uring"
		res.Client.CoalesceUS = float64(driver.TakeCoalesced()) / 1e3
	default:
		res.Client.IO = "epoll"
	}
	return res, nil
}

// exchange performs one Do on worker wi's connection and records it. due, if
// not nil, gives each request's due time (rate mode). It returns false when
// the worker should stop.
func (e *Engine) exchange(ctx context.Context, wi int, rec *recorder, reqs []driver.Request, out []driver.Outcome, b *backoff, due []int64, deadline int64) bool {
	c, err := e.conn(ctx, wi, rec)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, errEngineClosed) {
			rec.unsent += int64(len(reqs)) // claimed, never sent
			return false
		}
		// A failed reconnect fails the operations it was meant for:
		// counted, then retried after a pause.
		now := driver.Now()
		for j := range reqs {
			out[j] = driver.Outcome{Class: driver.Error, Done: now, Msg: "connect: " + shortErr(err)}
		}
		for j := range reqs {
			rec.record(&out[j], now, now)
		}
		rec.sent += int64(len(reqs))
		e.prog.failures.Add(int64(len(reqs)))
		return b.wait(ctx, deadline)
	}
	sent := driver.Now()
	if due != nil {
		for j := range due {
			_ = rec.lag.RecordValue(us(sent - due[j]))
		}
	}
	err = c.Do(ctx, reqs, out)
	if err != nil && ctx.Err() != nil {
		// aborted by cancellation: the outcomes are artefacts of closing
		// the connection, not of the server. Past the window's deadline
		// (the drain cut them) the requests were outstanding at its end.
		if now := driver.Now(); rec.deadline != 0 && now >= rec.deadline {
			for range out {
				rec.record(&driver.Outcome{Class: driver.Outstanding, Done: now}, sent, sent)
			}
			rec.sent += int64(len(reqs))
		}
		return false
	}
	var rc *driver.Reconnect
	if errors.As(err, &rc) && rc.Retry && rc.From < len(reqs) {
		if err = e.resend(ctx, wi, rec, rc, reqs, out); err != nil && ctx.Err() != nil {
			return false
		}
	}
	var ok, miss int64
	for j := range out {
		from := sent
		if due != nil {
			from = due[j]
		}
		rec.record(&out[j], from, sent)
		switch out[j].Class {
		case driver.OK:
			ok++
		case driver.Miss:
			miss++
		}
	}
	rec.sent += int64(len(reqs))
	e.prog.requests.Add(ok)
	if miss > 0 {
		e.prog.misses.Add(miss)
	}
	if f := int64(len(out)) - ok - miss; f > 0 {
		e.prog.failures.Add(f)
	}
	if err != nil {
		if errors.As(err, &rc) {
			// the connection ended as keep-alive connections do (idle
			// close, Connection: close): reopen at once, no pause.
			e.drop(wi, rc.Cause)
			return true
		}
		e.drop(wi, driver.CauseError)
		if ok == int64(len(out)) {
			return true
		}
		return b.wait(ctx, deadline)
	}
	b.reset()
	return true
}

// resend sends reqs[rc.From:] once more on a new connection after Do said
// the old one ended before their responses began (driver.Reconnect with
// Retry), as net/http's Transport retries a request on a reused connection.
// Their latency keeps running from the first send: the caller records them
// with it, so the time lost to the dead connection and the reopen is part
// of the figure, as a user of the server would see it. It returns the
// second Do's error; a second Reconnect is not retried again. When the
// reopen fails, out[rc.From:] say so.
func (e *Engine) resend(ctx context.Context, wi int, rec *recorder, rc *driver.Reconnect, reqs []driver.Request, out []driver.Outcome) error {
	e.drop(wi, rc.Cause)
	c, err := e.conn(ctx, wi, rec)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, errEngineClosed) {
			return err
		}
		now := driver.Now()
		for j := rc.From; j < len(out); j++ {
			out[j] = driver.Outcome{Class: driver.Error, Done: now, Msg: "connect: " + shortErr(err)}
		}
		return err // conn() left no connection: the next exchange reopens
	}
	if rc.Written {
		rec.resent += int64(len(reqs) - rc.From)
	}
	return c.Do(ctx, reqs[rc.From:], out[rc.From:])
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

func newBackoff() *backoff { return &backoff{} }
func (b *backoff) reset()  { b.Reset() }

// wait sleeps for the next pause (not past the deadline) and reports
// whether the worker should go on.
func (b *backoff) wait(ctx context.Context, deadline int64) bool {
	d := b.Next()
	if deadline != 0 {
		if left := time.Duration(deadline - driver.Now()); left < d {
			d = left
		}
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
