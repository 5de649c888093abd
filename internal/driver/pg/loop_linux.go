//go:build linux

package pg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

var (
	_ driver.Multiplexer = (*Driver)(nil)
	_ Backends           = (*loop)(nil)
)

// loop drives a window's PostgreSQL connections from one goroutine with
// epoll, as the HTTP driver's loop does: connections are opened and their
// statements prepared through pgx, then their sockets are taken over
// (pgconn.Hijack) and driven with raw non-blocking reads and writes. One
// pass reads every connection with data and parses its backend messages;
// the next sends the requests of every connection whose request completed.
// pgconn's per-request path (a context watched per call, buffered reads,
// message objects) is out of the hot path; the loop only parks in the Go
// runtime's poller when no socket has anything (package evloop).
//
// A reopen (after a timeout or a lost connection) runs pgx's connect on the
// loop's goroutine: it stalls the loop's other connections while it lasts,
// which only happens on failures.
type loop struct {
	d       *Driver
	timeout int64 // per-request timeout in ns, 0 = none

	p     evloop.Poller // the epoll set, the wake-up eventfd, Run/Close
	conns []*lconn

	// the state of the Run in progress
	ctx      context.Context
	w        driver.LoopWork
	deadline int64
	stopping bool         // no more requests: the claim or the deadline said so
	inflight int          // requests outstanding over all connections
	ended    bool         // the deadline passed: the in-flight requests were reported Outstanding
	stale    int          // connections whose request was reported Outstanding, answer not in yet
	alarm    evloop.Alarm // when scan must run next
	ready    []*lconn

	// last is driver.Now() when the last request of any Run ended.
	last int64
	// only, when set (Touch), is the one connection Run starts.
	only *lconn

	// onRows, when set (tests), sees the rows of every successful read.
	onRows func(seq uint64, rows []any)
}

// loopSupported says why the loop cannot drive d's configuration ("" when
// it can), before any connection is opened.
func (d *Driver) loopSupported() string {
	if d.readSQL != "" && d.cfg.Path == PreparedOne && d.cfg.BatchMode == Pipeline {
		return "path prepared-one with batch mode pipeline"
	}
	return ""
}

// OpenLoop implements driver.Multiplexer: conns connections, opened and
// prepared as Open does, on one epoll event loop. Configurations the loop
// does not drive (prepared-one pipeline, statements whose parameters the
// hot path does not encode, TLS) return an error wrapping
// driver.ErrNoLoop, for the engine to use a goroutine per connection.
// The loop it returns also implements Backends.
func (d *Driver) OpenLoop(ctx context.Context, conns int) (driver.Loop, error) {
	if conns < 1 {
		return nil, fmt.Errorf("pg: open loop: want at least 1 connection, got %d", conns)
	}
	if why := d.loopSupported(); why != "" {
		return nil, fmt.Errorf("pg: %s: %w", why, driver.ErrNoLoop)
	}
	l := &loop{d: d, timeout: int64(d.cfg.Timeout)}
	if err := l.p.Init(min(conns+1, 1024), l.terminateAll); err != nil {
		l.p.Shutdown()
		return nil, fmt.Errorf("pg: %w", err)
	}
	if err := l.openAll(ctx, conns); err != nil {
		l.p.Shutdown()
		return nil, err
	}
	return l, nil
}

// openAll opens every connection.
func (l *loop) openAll(ctx context.Context, n int) error {
	for i := 0; i < n; i++ {
		c := &lconn{i: i, fd: -1}
		l.conns = append(l.conns, c)
		if err := l.open(ctx, c); err != nil {
			return fmt.Errorf("pg: connection %d of %d: %w", i+1, n, err)
		}
	}
	return nil
}

// Run implements driver.Loop.
func (l *loop) Run(ctx context.Context, pipeline int, deadline int64, w driver.LoopWork) error {
	if err := l.p.Begin(); err != nil {
		return errLoopClosed
	}
	defer l.p.End()
	stop := context.AfterFunc(ctx, l.p.Wake)
	defer stop()

	// Requests are not pipelined (MaxPipeline is 1): one per connection.
	l.ctx, l.w, l.deadline, l.stopping, l.inflight = ctx, w, deadline, false, 0
	l.ended, l.stale = false, 0
	defer func() { l.w, l.ctx = nil, nil }()
	l.scan(driver.Now())
	for _, c := range l.conns {
		if l.only != nil && c != l.only {
			continue
		}
		switch c.st {
		case csOpen:
			l.queue(c)
		case csDown:
			c.reopen = true
			l.reconnect(c, driver.Now())
		}
	}
	for {
		l.sendReady()
		if l.deadline != 0 && l.stopping {
			if now := driver.Now(); now >= l.deadline {
				if !l.ended {
					l.endWindow()
				}
				if l.stale > 0 && now >= l.deadline+int64(driver.DrainGrace) {
					l.cutStale()
				}
			}
		}
		if l.stopping && l.inflight == 0 && l.stale == 0 {
			return nil
		}
		evs, err := l.p.Wait(l.alarm.WaitMS(driver.Now()))
		if err != nil {
			return fmt.Errorf("pg: %w", err)
		}
		if l.p.Cancelled() {
			l.abort()
			if err := ctx.Err(); err != nil {
				return err
			}
			return errLoopClosed
		}
		for _, ev := range evs {
			if ev.Fd == evloop.WakeTag {
				continue // cancel was checked above
			}
			c := l.conns[ev.Fd]
			if uint32(ev.Pad) != c.gen || c.st != csOpen {
				continue // an event of a socket closed earlier in this pass
			}
			l.event(c, ev.Events)
		}
		if now := driver.Now(); l.alarm.Due(now) {
			l.scan(now)
		}
	}
}

var errLoopClosed = errors.New("pg: event loop closed")

// LastDone implements Backends.
func (l *loop) LastDone() int64 { return l.last }

// PIDs implements Backends: the last backend of every connection.
func (l *loop) PIDs() []uint32 {
	var pids []uint32
	for _, c := range l.conns {
		if c.pid != 0 {
			pids = append(pids, c.pid)
		}
	}
	return pids
}

// Touch implements Backends: for each open connection in turn, a Run in
// which it alone performs one operation, seq 0 of the workload; the
// outcomes are not reported.
//
// Each connection's operation is bounded by TouchTimeout, and the first
// that fails ends Touch: a server that does not answer fails it (the
// loop's connections are then closed, and reopened by the next Run)
// instead of holding the run for a request timeout per connection.
func (l *loop) Touch(ctx context.Context) error {
	defer func() { l.only = nil }()
	for _, c := range l.conns {
		if c.st != csOpen {
			continue
		}
		l.only = c
		tctx, cancel := context.WithTimeout(ctx, TouchTimeout)
		err := l.Run(tctx, 1, 0, &touchWork{left: 1})
		cancel()
		if err != nil {
			if ctx.Err() == nil && tctx.Err() != nil {
				return fmt.Errorf("pg: connection %d of %d did not answer within %s", c.i+1, len(l.conns), TouchTimeout)
			}
			return err
		}
	}
	return nil
}

// TouchTimeout bounds the operation of one connection in Touch.
const TouchTimeout = time.Second

// touchWork grants one request.
type touchWork struct{ left int }

func (w *touchWork) Claim(int) (uint64, int) {
	if w.left == 0 {
		return 0, 0
	}
	w.left--
	return 0, 1
}

func (w *touchWork) Record(*driver.Outcome, int64) {}
func (w *touchWork) Reconnected(string, int)       {}

// endWindow ends the window at its deadline: every request still in
// flight is reported Outstanding (Done = the deadline) and left on its
// connection, stale: its answer, when it comes, is read and dropped
// (finish, fail), in this Run or a later one.
func (l *loop) endWindow() {
	l.ended = true
	for _, c := range l.conns {
		if c.busy && !c.stale {
			o := driver.Outcome{Class: driver.Outstanding, Op: l.d.wl.Index(c.op), Done: l.deadline}
			l.w.Record(&o, c.sent)
			c.stale = true
			l.stale++
			l.inflight--
		}
	}
	l.alarm.Set(l.deadline + int64(driver.DrainGrace))
}

// cutStale closes, DrainGrace after the deadline, the connections whose
// request is still outstanding: the next Run reopens them (a reconnect
// with driver.CauseWindowEnd).
func (l *loop) cutStale() {
	for _, c := range l.conns {
		if c.busy && c.stale {
			l.drop(c)
			c.busy, c.stale = false, false
			c.reopen, c.cause = true, driver.CauseWindowEnd
		}
	}
	l.stale = 0
}

// abort closes every connection after cancellation, forgetting the
// requests in flight.
func (l *loop) abort() {
	for _, c := range l.conns {
		l.drop(c)
		c.busy, c.stale = false, false
	}
	l.inflight, l.stale = 0, 0
}

// Close implements driver.Loop.
func (l *loop) Close() error { return l.p.Close() }

// terminateAll closes every connection (evloop calls it once, when the
// loop's descriptors are closed).
func (l *loop) terminateAll() {
	for _, c := range l.conns {
		l.terminate(c)
	}
}

// sendReady starts the next request on every connection queued in this
// pass.
func (l *loop) sendReady() {
	if len(l.ready) == 0 {
		return
	}
	now := driver.Now()
	if l.deadline != 0 && now >= l.deadline {
		l.stopping = true
	}
	for i := 0; i < len(l.ready); i++ { // start may queue again
		c := l.ready[i]
		c.queued = false
		if l.stopping || c.st != csOpen || c.busy {
			continue
		}
		seq, k := l.w.Claim(1)
		if k == 0 {
			l.stopping = true
			continue
		}
		l.start(c, seq, now)
	}
	l.ready = l.ready[:0]
}

// queue marks c to start its next request in this pass.
func (l *loop) queue(c *lconn) {
	if !c.queued {
		c.queued = true
		l.ready = append(l.ready, c)
	}
}

// scan handles what is due at now: request timeouts, reopens after a
// pause, the deadline; and sets the next time to look.
func (l *loop) scan(now int64) {
	l.alarm.Clear()
	if l.deadline != 0 {
		if now >= l.deadline {
			l.stopping = true
			if l.ended && l.stale > 0 {
				l.alarm.Set(l.deadline + int64(driver.DrainGrace))
			}
		} else {
			l.alarm.Set(l.deadline)
		}
	}
	for _, c := range l.conns {
		if l.only != nil && c != l.only {
			continue // Touch: the others wait for the next Run
		}
		switch c.st {
		case csOpen:
			if c.busy && l.timeout > 0 {
				if t := c.sent + l.timeout; now >= t {
					l.fail(c, driver.Timeout, "timeout")
				} else {
					l.alarm.Set(t)
				}
			}
		case csBackoff:
			if now < c.until {
				l.alarm.Set(c.until)
			} else if l.stopping {
				c.st = csDown
			} else {
				l.reconnect(c, now)
			}
		}
	}
}

// reconnect reopens c through pgx; a failed reopen fails a request
// claimed for it, as the engine does for a worker, and pauses.
func (l *loop) reconnect(c *lconn, now int64) {
	if l.stopping {
		c.st = csDown
		return
	}
	// The reopen runs on the loop's goroutine: bounded, and never past
	// the window's end.
	end := now + int64(reopenTimeout)
	if l.deadline != 0 {
		end = min(end, l.deadline)
	}
	if end <= now {
		c.st = csDown
		l.stopping = l.stopping || (l.deadline != 0 && now >= l.deadline)
		return
	}
	ctx, cancel := context.WithDeadline(l.ctx, driver.Wall(end))
	err := l.open(ctx, c)
	cancel()
	if err == nil {
		if c.reopen {
			cause := c.cause
			if cause == "" {
				cause = driver.CauseError
			}
			c.reopen, c.cause = false, ""
			l.w.Reconnected(cause, 0)
		}
		l.queue(c)
		return
	}
	if l.ctx.Err() != nil {
		return // Run sees the cancellation
	}
	if l.deadline != 0 && now >= l.deadline {
		l.stopping = true
		return
	}
	seq, k := l.w.Claim(1)
	if k == 0 {
		l.stopping = true
		return
	}
	done := driver.Now()
	o := driver.Outcome{Class: driver.Error, Op: l.d.wl.Index(l.d.wl.Op(seq)), Done: done, Msg: "connect: " + shortMsg(err)}
	l.w.Record(&o, now)
	l.pauseConn(c, done)
}

// reopenTimeout bounds one reopen of a connection.
const reopenTimeout = 5 * time.Second

// pauseConn schedules c's reopen after its back-off (driver.Backoff).
func (l *loop) pauseConn(c *lconn, now int64) {
	c.st, c.until, c.reopen = csBackoff, now+int64(c.backoff.Next()), true
	l.alarm.Set(c.until)
}
