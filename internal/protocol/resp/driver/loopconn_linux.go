//go:build linux

package resp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// lconn is one connection of a loop.
type lconn struct {
	evloop.Conn // Inflight: the batch's replies still to come
	codec       // requests encoded, replies checked (from rb)
	rb          replyBuf
	sc          scanner // where the reply at the start of pend (or of the read) ends
	pend        []byte  // received bytes of a reply not yet whole
	wbuf        []byte  // the batch's commands
	seq         uint64  // the batch's first request
	done        int     // replies of the batch answered
}

// pendRead is the least room a reply still arriving gets for a read, in
// its connection's own buffer (which grows by doubling as bytes arrive,
// never to a length the reply merely declares).
const pendRead = 16 << 10

// pendKeep bounds the buffer a connection keeps once its long reply is
// read: a larger one is released.
const pendKeep = 256 << 10

// open dials and handshakes c as Open does, then takes its socket over: a
// duplicate of it, in the loop's epoll set, the net.Conn closed (which
// takes the original out of the Go runtime's poller, whose wake-ups the
// loop's reads would otherwise cost).
func (l *loop) open(ctx context.Context, c *lconn) error {
	gc, err := l.d.dial(ctx)
	if err != nil {
		return err
	}
	defer gc.nc.Close()
	sc, ok := gc.nc.(*net.TCPConn)
	if !ok {
		return fmt.Errorf("a %T connection: %w", gc.nc, driver.ErrNoLoop)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return fmt.Errorf("take the connection over: %w", err)
	}
	fd, derr := -1, error(nil)
	if err := raw.Control(func(f uintptr) { fd, derr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) }); err != nil || derr != nil {
		return fmt.Errorf("take the connection over: %w", errors.Join(err, derr))
	}
	c.Gen++
	if err := l.P.Add(fd, unix.EPOLLIN, int32(c.I), int32(c.Gen)); err != nil {
		_ = unix.Close(fd)
		return fmt.Errorf("register the socket: %w", err)
	}
	c.Fd, c.St, c.Inflight, c.done = fd, evloop.Open, 0, 0
	c.Out.Reset()
	c.sc.reset()
	// Bytes that came after the handshake's replies answer nothing sent
	// yet: as on the goroutine path, they are read as the first reply
	// (and the batch then fails as out of step).
	c.pend = append(c.pend[:0], gc.rd.Peek()...)
	return nil
}

// drop closes c's socket; its partial state goes with it.
func (l *loop) drop(c *lconn) {
	if c.Fd >= 0 {
		l.P.CloseSocket(c.Fd) // also leaves the epoll set, or the ring
	}
	c.Fd, c.St, c.pend = -1, evloop.Down, c.pend[:0]
	c.Out.Reset()
	c.sc.reset()
	c.flush()
}

// send writes the batch of k requests from seq in one write.
func (l *loop) send(c *lconn, seq uint64, k int, now int64) {
	c.Sent, c.Inflight, c.seq, c.done = now, k, seq, 0
	l.Inflight += k
	b := c.wbuf[:0]
	for j := 0; j < k; j++ {
		b = c.appendRequest(b, seq+uint64(j))
	}
	c.wbuf = b
	c.Out.Pending = b
	l.Write(&c.Conn)
}

// read reads what arrived on c and handles every whole reply in it. A
// reply begun in an earlier read is read on in c's own buffer; else the
// read goes to the loop's shared buffer, and what is left of it (a reply
// begun) is kept in c's.
func (l *loop) read(c *lconn) {
	b, m := l.buf, 0
	if len(c.pend) > 0 {
		if cap(c.pend)-len(c.pend) < pendRead {
			nb := make([]byte, len(c.pend), max(2*cap(c.pend), len(c.pend)+pendRead))
			copy(nb, c.pend)
			c.pend = nb
		}
		b, m = c.pend[:cap(c.pend)], len(c.pend)
	}
	n, err := evloop.ReadNonblock(c.Fd, b[m:])
	if err != nil {
		if err != unix.EAGAIN {
			l.lost(c, err)
		}
		return
	}
	now := driver.Now()
	if n == 0 {
		l.eof(c, now)
		return
	}
	if !l.consume(c, b[:m+n], now) {
		return
	}
	c.flush()
}

// Feed implements evloop.Feeder: the bytes b that arrived on c on the
// loop's ring, handled as read handles what it reads (empty b: the server
// closed c).
func (l *loop) Feed(ec *evloop.Conn, b []byte) {
	c, now := l.conns[ec.I], driver.Now()
	if len(b) == 0 {
		l.eof(c, now)
		return
	}
	if len(c.pend) > 0 { // a reply begun: it goes on in c's own buffer
		c.pend = append(c.pend, b...)
		b = c.pend
	}
	if !l.consume(c, b, now) {
		return
	}
	c.flush()
}

// ReadFailed implements evloop.Feeder: an error receiving on c.
func (l *loop) ReadFailed(ec *evloop.Conn, err error) { l.lost(l.conns[ec.I], err) }

// consume handles the whole replies in data (c's pending bytes, then what
// arrived) and keeps the rest. It returns false when c was closed.
func (l *loop) consume(c *lconn, data []byte, now int64) bool {
	off := 0
	for off < len(data) {
		if c.Inflight == 0 {
			l.unsolicited(c, now)
			return false
		}
		start := c.sc.off
		size, err := c.sc.scan(data[off:])
		if err != nil {
			l.failErr(c, err)
			return false
		}
		if size == 0 {
			break
		}
		c.rb.reset(data[off:off+size], start, c.sc.first, c.sc.firstN)
		off += size
		// Bytes past the batch's last reply answer no request: the
		// server is out of step, as the goroutine path finds it.
		if !l.answer(c, size, c.Inflight == 1 && off < len(data), now) {
			return false
		}
	}
	switch {
	case len(c.pend) == 0:
		c.pend = append(c.pend[:0], data[off:]...)
	case off == 0: // data is pend's array, none of it whole yet
		c.pend = data
	default:
		c.pend = data[:copy(data, data[off:])]
	}
	if len(c.pend) == 0 && cap(c.pend) > pendKeep {
		c.pend = nil
	}
	return true
}

// answer checks the reply in c.rb, of size bytes, to the batch's next
// request and records it; extra says bytes followed the batch's last
// reply, which then fails and c with it. It returns false when c was
// closed.
func (l *loop) answer(c *lconn, size int, extra bool, now int64) bool {
	class, msg, err := c.readOne(c.seq + uint64(c.done))
	if err == nil && c.rb.Consumed() != size {
		err = protoErr(c.rb.off, "reply of %d bytes read as %d", size, c.rb.Consumed())
	}
	if err != nil { // not on a reply the scanner found whole
		l.failErr(c, err)
		return false
	}
	if extra {
		class, msg = driver.Error, msgUnsolicited
	}
	c.done++
	o := &l.out
	*o = driver.Outcome{Class: class, Bytes: int64(size), Done: now, Msg: msg}
	if l.Answered(&c.Conn) {
		l.W.Record(o, c.Sent)
	} else if class == driver.OK || class == driver.Miss {
		// outstanding at a window's end: counted then, and now only as
		// answered after it
		o.Class, o.Msg = driver.Drained, ""
		l.W.Record(o, c.Sent)
	}
	if extra {
		l.drop(c)
		c.Cause = driver.CauseError
		l.Pause(&c.Conn, now)
		return false
	}
	if c.Inflight == 0 {
		c.Backoff.Reset()
		l.Queue(&c.Conn)
	}
	return true
}

// unsolicited handles bytes on an idle connection: nothing to account them
// to, so a request is claimed and failed for them (as a failed reopen
// fails one), and the connection replaced after a pause.
func (l *loop) unsolicited(c *lconn, now int64) {
	l.drop(c)
	c.Cause = driver.CauseError
	if !l.Stopping {
		if _, k := l.W.Claim(1); k > 0 {
			l.out = driver.Outcome{Class: driver.Error, Done: now, Msg: msgUnsolicited}
			l.W.Record(&l.out, now)
		} else {
			l.Stopping = true
		}
	}
	if l.Stopping {
		c.Reopen = true // reopened by the next Run
		return
	}
	l.Pause(&c.Conn, now)
}

// eof handles the server closing c: while idle, the end of a connection
// the server no longer wanted (reopened at once, not a failure); else a
// failure of the batch, "connection closed by peer" before any byte of a
// reply, "mid-reply" after some, as on the goroutine path.
func (l *loop) eof(c *lconn, now int64) {
	if c.Inflight == 0 {
		l.IdleEnded(&c.Conn, driver.CauseIdleClosed, now)
		return
	}
	err := io.EOF
	if len(c.pend) > 0 || c.sc.started() {
		err = io.ErrUnexpectedEOF
	}
	l.failErr(c, err)
}

// lost handles an error reading or writing c.
func (l *loop) lost(c *lconn, err error) {
	if c.Inflight == 0 && errors.Is(err, unix.ECONNRESET) {
		l.IdleEnded(&c.Conn, driver.CauseReset, driver.Now())
		return
	}
	l.failErr(c, err)
}

// failErr fails c's outstanding requests with err, classed as the
// goroutine path classes it.
func (l *loop) failErr(c *lconn, err error) {
	class, msg := l.d.classify(l.Ctx, err)
	l.fail(c, class, msg)
}

// fail fails c's outstanding requests, closes it and schedules its reopen
// after a pause.
func (l *loop) fail(c *lconn, class driver.Class, msg string) {
	now := driver.Now()
	l.out = driver.Outcome{Class: class, Done: now, Msg: msg}
	l.FailOutstanding(&c.Conn, &l.out)
	l.drop(c)
	c.Cause = driver.CauseError
	l.Pause(&c.Conn, now)
}
