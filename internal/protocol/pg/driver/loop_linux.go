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
	evloop.Loop // the connections, the Run and its accounting
	d           *Driver
	conns       []*lconn // Loop.Conns, as the connections they are part of

	// last is driver.Now() when the last request of any Run ended.
	last int64

	// onRows, when set (tests), sees the rows of every successful read.
	onRows func(seq uint64, rows []any)
	// onTimeout, when set (tests), sees a connection whose request timed
	// out, before it is dropped.
	onTimeout func(c *lconn)

	// out is the outcome being recorded: a field, not a variable whose
	// address, passed to the LoopWork interface, would move it to the
	// heap on every request.
	out driver.Outcome
}

// record records o, sent at sent.
func (l *loop) record(o driver.Outcome, sent int64) {
	l.out = o
	l.W.Record(&l.out, sent)
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
	l := &loop{d: d}
	l.Timeout = int64(d.cfg.Timeout)
	if err := l.Init(l, conns, l.terminateAll); err != nil {
		l.P.Shutdown()
		return nil, fmt.Errorf("pg: %w", err)
	}
	if err := l.openAll(ctx, conns); err != nil {
		l.P.Shutdown()
		return nil, err
	}
	return l, nil
}

// openAll opens every connection.
func (l *loop) openAll(ctx context.Context, n int) error {
	for i := 0; i < n; i++ {
		c := &lconn{}
		l.Add(&c.Conn)
		l.conns = append(l.conns, c)
		if err := l.open(ctx, c); err != nil {
			return fmt.Errorf("pg: connection %d of %d: %w", i+1, n, err)
		}
	}
	return nil
}

// Run implements driver.Loop. Requests are not pipelined (MaxPipeline is
// 1): one per connection.
func (l *loop) Run(ctx context.Context, _ int, deadline int64, w driver.LoopWork) error {
	err := l.Loop.Run(ctx, 1, deadline, w)
	switch {
	case err == nil || err == ctx.Err():
		return err
	case err == evloop.ErrClosed:
		return errLoopClosed
	}
	return fmt.Errorf("pg: %w", err)
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
	defer func() { l.Only = nil }()
	for _, c := range l.conns {
		if c.St != evloop.Open {
			continue
		}
		l.Only = &c.Conn
		tctx, cancel := context.WithTimeout(ctx, TouchTimeout)
		err := l.Run(tctx, 1, 0, &touchWork{left: 1})
		cancel()
		if err != nil {
			if ctx.Err() == nil && tctx.Err() != nil {
				return fmt.Errorf("pg: connection %d of %d did not answer within %s", c.I+1, len(l.conns), TouchTimeout)
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

// terminateAll closes every connection (evloop calls it once, when the
// loop's descriptors are closed).
func (l *loop) terminateAll() {
	for _, c := range l.conns {
		l.terminate(c)
	}
}

// reconnect reopens c through pgx; a failed reopen fails a request
// claimed for it, as the engine does for a worker, and pauses.
func (l *loop) reconnect(c *lconn, now int64) {
	failed, err := l.Redial(&c.Conn, now, reopenTimeout, func(ctx context.Context) error { return l.open(ctx, c) })
	if !failed {
		return
	}
	seq, k := l.W.Claim(1)
	if k == 0 {
		l.Stopping = true
		return
	}
	done := driver.Now()
	l.record(driver.Outcome{Class: driver.Error, Op: l.d.wl.Index(l.d.wl.Op(seq)), Done: done, Msg: "connect: " + shortMsg(err)}, now)
	l.Pause(&c.Conn, done)
}

// reopenTimeout bounds one reopen of a connection.
const reopenTimeout = 5 * time.Second

// The loop's evloop.Handler.

// Send implements evloop.Handler: one request (the claim is of one).
func (l *loop) Send(c *evloop.Conn, seq uint64, _ int, now int64) { l.start(l.conns[c.I], seq, now) }

// Read implements evloop.Handler.
func (l *loop) Read(c *evloop.Conn) { l.read(l.conns[c.I]) }

// Connected implements evloop.Handler: never called, connections open
// through pgx (never evloop.Connecting).
func (l *loop) Connected(*evloop.Conn) {}

// WriteFailed implements evloop.Handler.
func (l *loop) WriteFailed(c *evloop.Conn, err error) {
	l.fail(l.conns[c.I], driver.Error, driver.Msg(err))
}

// Reopen implements evloop.Handler.
func (l *loop) Reopen(c *evloop.Conn, now int64) { l.reconnect(l.conns[c.I], now) }

// TimedOut implements evloop.Handler: the request outlived its timeout.
func (l *loop) TimedOut(c *evloop.Conn, _ int64) {
	if l.onTimeout != nil {
		l.onTimeout(l.conns[c.I])
	}
	l.fail(l.conns[c.I], driver.Timeout, "timeout")
}

// Drop implements evloop.Handler.
func (l *loop) Drop(c *evloop.Conn) { l.drop(l.conns[c.I]) }

// Op implements evloop.Handler.
func (l *loop) Op(c *evloop.Conn, _ int) uint8 { return l.d.wl.Index(l.conns[c.I].op) }
