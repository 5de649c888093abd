//go:build linux

package resp

import (
	"context"
	"errors"
	"fmt"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

var _ driver.Multiplexer = (*Driver)(nil)

// loop drives a window's connections from one goroutine with epoll, as the
// HTTP and PostgreSQL drivers' loops do: each connection is opened and
// handshaken (AUTH, PING) by the goroutine path's code, then its socket is
// taken over and driven with raw non-blocking reads and writes. One pass
// reads every connection with data, finds the whole replies in what arrived
// (scanner) and checks each with the goroutine path's checks (codec, reading
// the reply in place through replyBuf); the next sends the following batch
// of every connection whose batch is answered. The loop parks in the Go
// runtime's poller only when no socket has anything (package evloop), which
// also paces a constant rate (driver.PacedLoop). A closed loop in
// benchrig's own process goes on io_uring (evloop.Feeder: Feed is given
// what a connection's multishot receive brought, and handles it as read
// does).
//
// A reopen (after a timeout or a lost connection) dials and handshakes on
// the loop's goroutine: it stalls the loop's other connections while it
// lasts, which happens only on failures, or when the server closed an idle
// connection.
type loop struct {
	evloop.Loop // the connections, the Run and its accounting
	d           *Driver
	conns       []*lconn // Loop.Conns, as the connections they are part of
	buf         []byte   // the read buffer, shared: one goroutine reads

	// out is the outcome being recorded: a field, not a variable whose
	// address, passed to the LoopWork interface, would move it to the
	// heap on every request.
	out driver.Outcome
}

// loopReadBuf is the size of the shared read buffer: the replies of a
// batch that arrive together are read at once (a reply still incomplete
// goes on in its connection's own buffer).
const loopReadBuf = 64 << 10

// OpenLoop implements driver.Multiplexer: conns connections, opened and
// handshaken as Open does, on one epoll event loop. Over TLS it returns an
// error wrapping driver.ErrNoLoop, for the engine to use a goroutine per
// connection.
func (d *Driver) OpenLoop(ctx context.Context, conns int) (driver.Loop, error) {
	if conns < 1 {
		return nil, fmt.Errorf("resp: open loop: want at least 1 connection, got %d", conns)
	}
	if d.tlsConf != nil {
		return nil, fmt.Errorf("resp: TLS (the event loop reads and writes plain sockets): %w", driver.ErrNoLoop)
	}
	l := &loop{d: d, buf: make([]byte, loopReadBuf)}
	l.Timeout, l.IdleFirst = int64(d.cfg.Timeout), true
	if err := l.Init(l, conns, l.dropAll); err != nil {
		l.P.Shutdown()
		return nil, fmt.Errorf("resp: %w", err)
	}
	for i := 0; i < conns; i++ {
		c := &lconn{}
		c.codec = newCodec(d, &c.rb)
		c.rb.lim, c.sc.lim = &d.lim, &d.lim
		l.Add(&c.Conn)
		l.conns = append(l.conns, c)
		if err := l.open(ctx, c); err != nil {
			l.P.Shutdown()
			return nil, fmt.Errorf("resp: connection %d of %d: %w", i+1, conns, err)
		}
	}
	return l, nil
}

// Run implements driver.Loop: batches of pipeline requests (at most
// MaxPipeline) per connection, each request one command.
func (l *loop) Run(ctx context.Context, pipeline int, deadline int64, w driver.LoopWork) error {
	err := l.Loop.Run(ctx, min(max(pipeline, 1), MaxPipeline), deadline, w)
	for _, c := range l.conns {
		c.flush()
	}
	switch {
	case err == nil || err == ctx.Err():
		return err
	case err == evloop.ErrClosed:
		return errLoopClosed
	}
	return fmt.Errorf("resp: %w", err)
}

var errLoopClosed = errors.New("resp: event loop closed")

// dropAll closes every connection (evloop calls it once, when the loop's
// descriptors are closed).
func (l *loop) dropAll() {
	for _, c := range l.conns {
		l.drop(c)
	}
}

// reconnect reopens c as OpenLoop opened it; a failed reopen fails the
// batch claimed for it, as the engine does for a worker, and pauses.
func (l *loop) reconnect(c *lconn, now int64) {
	failed, err := l.Redial(&c.Conn, now, l.d.cfg.DialTimeout, func(ctx context.Context) error { return l.open(ctx, c) })
	if err != nil {
		c.Cause = driver.CauseError
	}
	if !failed {
		return
	}
	_, k := l.W.Claim(l.Pipeline)
	if k == 0 {
		l.Stopping = true
		return
	}
	done := driver.Now()
	l.out = driver.Outcome{Class: driver.Error, Done: done, Msg: "connect: " + driver.Msg(err)}
	for j := 0; j < k; j++ {
		l.W.Record(&l.out, now)
	}
	l.Pause(&c.Conn, done)
}

// The loop's evloop.Handler.

// Send implements evloop.Handler.
func (l *loop) Send(c *evloop.Conn, seq uint64, k int, now int64) {
	l.send(l.conns[c.I], seq, k, now)
}

// Read implements evloop.Handler.
func (l *loop) Read(c *evloop.Conn) { l.read(l.conns[c.I]) }

// Connected implements evloop.Handler: never called, connections open as
// Open's do (never evloop.Connecting).
func (l *loop) Connected(*evloop.Conn) {}

// WriteFailed implements evloop.Handler.
func (l *loop) WriteFailed(c *evloop.Conn, err error) { l.lost(l.conns[c.I], err) }

// Reopen implements evloop.Handler.
func (l *loop) Reopen(c *evloop.Conn, now int64) { l.reconnect(l.conns[c.I], now) }

// TimedOut implements evloop.Handler: the batch outlived Config.Timeout.
func (l *loop) TimedOut(c *evloop.Conn, _ int64) {
	l.fail(l.conns[c.I], driver.Timeout, "timeout")
}

// Drop implements evloop.Handler.
func (l *loop) Drop(c *evloop.Conn) { l.drop(l.conns[c.I]) }

// Op implements evloop.Handler: one kind of operation.
func (l *loop) Op(*evloop.Conn, int) uint8 { return 0 }
