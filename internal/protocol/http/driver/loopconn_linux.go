//go:build linux

package http

import (
	"bytes"
	"crypto/tls"
	"errors"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// lconn is one connection of a loop.
type lconn struct {
	evloop.Conn
	used  bool   // a response completed on this socket: it is being reused
	again bool   // the batch in flight is a re-send (never re-sent twice)
	idx   []int  // several requests: the request index of each of the batch
	done  int    // several requests: responses of the batch completed
	wbuf  []byte // several requests: the batch's bytes
	pend  []byte // unparsed bytes (at most a partial line)
	// fixed is the last response parsed, when it was read whole (one
	// request, no Connection: close, at most maxFixed bytes): a server
	// that answers with the same bytes (a fixed body; its Date changes
	// once a second) has the next ones compared, not parsed (consume).
	fixed []byte
	p     parser
	tc    *tls.Conn // over TLS: the session, over tp (loop_tls_linux.go)
	tp    *tlsPipe
}

// dialConn starts a non-blocking connect on a new socket.
func (l *loop) dialConn(c *lconn) error {
	fd, err := unix.Socket(l.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	c.Fd, c.Gen = fd, c.Gen+1
	c.St, c.used = evloop.Connecting, false
	err = unix.Connect(fd, l.sa)
	events := uint32(unix.EPOLLOUT)
	switch {
	case err == nil:
		c.St, events = evloop.Open, unix.EPOLLIN
		if l.d.w.tls != nil {
			if err := l.handshake(c); err != nil {
				l.drop(c)
				return err
			}
		}
	case errors.Is(err, unix.EINPROGRESS):
	default:
		l.drop(c)
		return err
	}
	if err := l.P.Add(fd, events, int32(c.I), int32(c.Gen)); err != nil {
		l.drop(c)
		return err
	}
	return nil
}

// finishConnect completes a connect that epoll reported writable.
func (l *loop) finishConnect(c *lconn) error {
	v, err := unix.GetsockoptInt(c.Fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && v != 0 {
		err = unix.Errno(v)
	}
	if err == nil && l.d.w.tls != nil {
		err = l.handshake(c)
	}
	if err == nil {
		err = l.P.Mod(c.Fd, unix.EPOLLIN, int32(c.I), int32(c.Gen))
	}
	if err != nil {
		l.drop(c)
		return err
	}
	c.St = evloop.Open
	return nil
}

// connect reopens c during a Run.
func (l *loop) connect(c *lconn, now int64) {
	if err := l.dialConn(c); err != nil {
		l.connectFailed(c, err, now)
		return
	}
	if c.St == evloop.Open {
		l.opened(c)
		return
	}
	c.Until = now + l.dial
	l.Alarm.Set(c.Until)
}

func (l *loop) opened(c *lconn) {
	if c.Reopen {
		c.Reopen = false
		l.W.Reconnected(c.Cause, c.Resend)
		c.Cause = ""
	}
	if c.Resend > 0 {
		l.sendAgain(c)
		return
	}
	l.Queue(&c.Conn)
}

// connectFailed fails the batch the connection was reopened for, as the
// engine does for a goroutine's failed reopen, and pauses before retrying.
// A connection reopened to re-send requests fails those.
func (l *loop) connectFailed(c *lconn, err error, now int64) {
	l.drop(c)
	if c.Resend > 0 {
		o := driver.Outcome{Class: driver.Error, Done: now, Msg: "connect: " + driver.Msg(err)}
		l.FailOutstanding(&c.Conn, &o)
		c.Resend = 0
		c.Cause = driver.CauseError
		l.Pause(&c.Conn, now)
		return
	}
	c.Cause = driver.CauseError
	if l.Stopping {
		return
	}
	if l.Deadline != 0 && now >= l.Deadline {
		l.Stopping = true
		return
	}
	seq0, k := l.W.Claim(l.Pipeline)
	if k == 0 {
		l.Stopping = true
		return
	}
	seq, o := seq0, driver.Outcome{Class: driver.Error, Done: now, Msg: "connect: " + driver.Msg(err)}
	for j := 0; j < k; j++ {
		o.Op = l.d.t.op(l.d.t.pick(seq + uint64(j)))
		l.W.Record(&o, now)
	}
	l.Pause(&c.Conn, now)
}

// drop closes c's socket; its partial state goes with it.
func (l *loop) drop(c *lconn) {
	if c.Fd >= 0 {
		l.P.CloseSocket(c.Fd) // also leaves the epoll set, or the ring
	}
	c.Fd, c.St, c.pend, c.fixed = -1, evloop.Down, c.pend[:0], c.fixed[:0]
	c.tc, c.tp = nil, nil
	c.Out.Reset()
	c.p.reset()
}

// send writes a batch of k requests, the first with sequence number seq.
func (l *loop) send(c *lconn, seq uint64, k int, now int64) {
	c.Sent, c.Inflight, c.again = now, k, false
	l.Inflight += k
	if t := l.d.t; t.multi() {
		c.idx, c.wbuf = c.idx[:0], c.wbuf[:0]
		for j := 0; j < k; j++ {
			i := t.pick(seq + uint64(j))
			c.idx = append(c.idx, i)
			c.wbuf = append(c.wbuf, t.reqs[i].bytes...)
		}
		c.done, c.p.head = 0, t.reqs[c.idx[0]].head
		c.Out.Pending = c.wbuf
	} else {
		c.Out.Pending = l.pipe[:k*len(l.d.t.request)]
	}
	l.writeBatch(c)
}

// sendAgain re-sends, on c's new socket, the requests its old one left
// unanswered (lost). They keep their first send time: in a closed loop a
// request's latency runs from when it was first sent, so the time lost to
// the dead connection and the reconnect is in the figure, as a user of the
// server would have waited it (net/http's Transport retries the same way,
// inside one RoundTrip).
func (l *loop) sendAgain(c *lconn) {
	k := c.Resend
	c.Resend, c.again = 0, true
	if t := l.d.t; t.multi() {
		c.idx = append(c.idx[:0], c.idx[c.done:]...)
		c.wbuf = c.wbuf[:0]
		for _, i := range c.idx {
			c.wbuf = append(c.wbuf, t.reqs[i].bytes...)
		}
		c.done, c.p.head = 0, t.reqs[c.idx[0]].head
		c.Out.Pending = c.wbuf
	} else {
		c.Out.Pending = l.pipe[:k*len(l.d.t.request)]
	}
	if l.Timeout > 0 {
		l.Alarm.Set(c.Sent + l.Timeout) // still timed from the first send
	}
	l.writeBatch(c)
}

// writeBatch writes a new batch, encrypted first over TLS.
func (l *loop) writeBatch(c *lconn) {
	if c.tc != nil {
		if err := l.seal(c); err != nil {
			l.fail(c, err)
			return
		}
	}
	l.write(c)
}

// write writes what is left of the batch (evloop.Loop.Write; an error
// is lost's).
func (l *loop) write(c *lconn) { l.Write(&c.Conn) }

// read reads what arrived on c and completes every whole response in it.
// Bytes with no request outstanding are an error: on an idle connection
// (unsolicited), or past the last response of the batch, which then
// cannot be trusted either.
func (l *loop) read(c *lconn) {
	if c.tc != nil {
		l.readTLS(c)
		return
	}
	m := copy(l.buf, c.pend)
	n, err := evloop.ReadNonblock(c.Fd, l.buf[m:])
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
	l.consume(c, l.buf[:m+n], now)
}

// Feed implements evloop.Feeder: the bytes b that arrived on c on the
// loop's ring, handled as read handles what it reads (empty b: the server
// closed c); over TLS, ciphertext for c's tlsPipe, as readTLS's.
func (l *loop) Feed(ec *evloop.Conn, b []byte) {
	c, now := l.conns[ec.I], driver.Now()
	if c.tc != nil {
		c.tp.arrived(b)
		l.decrypt(c)
		return
	}
	if len(b) == 0 {
		l.eof(c, now)
		return
	}
	if len(c.pend) > 0 {
		l.fbuf = append(append(l.fbuf[:0], c.pend...), b...)
		b = l.fbuf
	}
	l.consume(c, b, now)
}

// ReadFailed implements evloop.Feeder: an error receiving on c.
func (l *loop) ReadFailed(ec *evloop.Conn, err error) { l.lost(l.conns[ec.I], err) }

// consume parses data (c's unparsed bytes, then what arrived) and
// completes every whole response in it, keeping the partial rest. It
// returns false when c was closed.
func (l *loop) consume(c *lconn, data []byte, now int64) bool {
	if c.Inflight == 0 {
		l.unsolicited(c, now)
		return false
	}
	for len(data) > 0 {
		if n := len(c.fixed); n > 0 && !c.p.started && len(data) >= n && bytes.Equal(data[:n], c.fixed) {
			// the same bytes as the response parsed last, which c.p.r
			// still holds: the same outcome, without parsing them again
			data = data[n:]
		} else {
			fresh := !c.p.started
			k, done, err := c.p.parse(data)
			raw := data[:k]
			data = data[k:]
			if err != nil {
				l.fail(c, err)
				return false
			}
			if !done {
				c.fixed = c.fixed[:0]
				break
			}
			c.fixed = c.fixed[:0]
			if r := &c.p.r; fresh && !r.close && !r.tooBig && k <= maxFixed && !l.d.t.multi() {
				c.fixed = append(c.fixed, raw...)
			}
		}
		if c.Inflight == 1 && len(data) > 0 {
			l.fail(c, errUnsolicited)
			return false
		}
		if !l.complete(c, now) {
			return false
		}
	}
	c.pend = append(c.pend[:0], data...)
	return true
}

// unsolicited handles bytes on an idle connection: nothing to account them
// to, so a request is claimed and failed for them (as a failed reconnect
// fails one), and the connection replaced after a pause.
func (l *loop) unsolicited(c *lconn, now int64) {
	l.drop(c)
	c.Cause = driver.CauseError
	if !l.Stopping {
		if seq, k := l.W.Claim(1); k > 0 {
			_, msg := failure(errUnsolicited)
			op := l.d.t.op(l.d.t.pick(seq))
			l.W.Record(&driver.Outcome{Class: driver.Error, Op: op, Done: now, Msg: msg}, now)
		}
	}
	if l.Stopping {
		c.Reopen = true // reopened by the next Run
		return
	}
	l.Pause(&c.Conn, now)
}

// complete records the response the parser holds. It returns false when c
// was closed (the server asked for it, or closed inside a pipeline).
func (l *loop) complete(c *lconn, now int64) bool {
	if c.Inflight == 0 {
		return true // unsolicited: nothing to account it to
	}
	r := &c.p.r
	// the loop's own outcome: a local one would escape to the heap
	// through the interface call, an allocation per response
	o := &l.out
	*o = driver.Outcome{Class: driver.OK, Bytes: r.bytes, Done: now}
	if t := l.d.t; t.ops != nil {
		o.Op = t.op(c.idx[len(c.idx)-c.Inflight])
	}
	if msg := l.d.check(r); msg != "" {
		o.Class, o.Msg = driver.Unexpected, msg
	}
	c.used = true
	if l.Answered(&c.Conn) {
		l.W.Record(o, c.Sent)
	} else if o.Class == driver.OK {
		// outstanding at a window's end: counted then, and now only as
		// answered after it
		o.Class = driver.Drained
		l.W.Record(o, c.Sent)
	}
	if t := l.d.t; t.multi() && c.Inflight > 0 {
		c.done++
		c.p.head = t.reqs[c.idx[c.done]].head
	}
	if r.close {
		if c.Inflight > 0 {
			l.fail(c, errCloseInPipeline)
			return false
		}
		// Connection: close on a healthy connection: reopen at once.
		c.Backoff.Reset()
		l.drop(c)
		c.Cause = driver.CauseClose
		if !l.Stopping {
			c.Reopen = true
			l.connect(c, now)
		}
		return false
	}
	if c.Inflight == 0 {
		c.Backoff.Reset()
		l.Queue(&c.Conn)
	}
	return true
}

// maxFixed bounds the responses consume compares instead of parsing.
const maxFixed = 1024

var errCloseInPipeline = errors.New("server closed the connection inside a pipeline")

// eof handles the server closing c.
func (l *loop) eof(c *lconn, now int64) {
	if c.Inflight == 0 {
		l.IdleEnded(&c.Conn, driver.CauseIdleClosed, now)
		return
	}
	done, err := c.p.eof()
	if done {
		l.complete(c, now)
		return
	}
	l.lost(c, err)
}

// lost handles an I/O error on c. A reused connection that the server
// closed or reset before any byte of the current response arrived ended
// as keep-alive connections end: its unanswered requests are sent again,
// once, on a new connection when every one is safe to repeat
// (Config.RetryUnsafe), and that is a reconnect, not an error. Anything
// else fails them (fail).
func (l *loop) lost(c *lconn, err error) {
	cs := cause(err)
	if cs == "" {
		l.fail(c, err)
		return
	}
	if c.Inflight == 0 {
		l.IdleEnded(&c.Conn, cs, driver.Now())
		return
	}
	if !c.used || c.p.started || c.again || c.Stale || !l.retryable(c) {
		l.fail(c, err)
		return
	}
	c.Resend = c.Inflight
	l.drop(c)
	c.Cause, c.Reopen = cs, true
	l.connect(c, driver.Now())
}

// retryable reports whether every request c has outstanding may be sent
// again.
func (l *loop) retryable(c *lconn) bool {
	t := l.d.t
	if !t.multi() {
		return t.reqs[0].retry
	}
	for _, i := range c.idx[c.done:] {
		if !t.reqs[i].retry {
			return false
		}
	}
	return true
}

// fail fails c's outstanding requests with err, closes it and schedules its
// reopen after a pause. Messages are the blocking driver's.
func (l *loop) fail(c *lconn, err error) {
	now := driver.Now()
	class, msg := failure(err)
	l.FailOutstanding(&c.Conn, &driver.Outcome{Class: class, Done: now, Msg: msg})
	l.drop(c)
	c.Cause = driver.CauseError
	l.Pause(&c.Conn, now)
}
