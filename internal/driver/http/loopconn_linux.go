//go:build linux

package http

import (
	"crypto/tls"
	"errors"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// connState is where a loop connection stands.
type connState uint8

const (
	csDown       connState = iota // no socket
	csConnecting                  // non-blocking connect in progress
	csOpen                        // connected
	csBackoff                     // failed: reopened at until
)

// lconn is one connection of a loop.
type lconn struct {
	i        int
	fd       int
	gen      uint32 // bumped per socket, carried in its epoll events
	st       connState
	until    int64 // connect deadline (csConnecting) or reopen time (csBackoff)
	backoff  driver.Backoff
	reopen   bool          // count a reconnect when the connect completes
	cause    string        // why the last socket ended (driver.Cause…), reported at the reopen
	queued   bool          // in loop.ready
	inflight int           // responses outstanding in the batch
	stale    bool          // the batch was reported Outstanding at a window's end: its responses are dropped
	sent     int64         // when the batch was first sent
	used     bool          // a response completed on this socket: it is being reused
	resend   int           // requests to send again once the new socket is open
	again    bool          // the batch in flight is a re-send (never re-sent twice)
	idx      []int         // several requests: the request index of each of the batch
	done     int           // several requests: responses of the batch completed
	wbuf     []byte        // several requests: the batch's bytes
	out      evloop.Outbox // the unwritten rest of the batch
	pend     []byte        // unparsed bytes (at most a partial line)
	p        parser
	tc       *tls.Conn // over TLS: the session, over tp (loop_tls_linux.go)
	tp       *tlsPipe
}

// dialConn starts a non-blocking connect on a new socket.
func (l *loop) dialConn(c *lconn) error {
	fd, err := unix.Socket(l.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	c.fd, c.gen = fd, c.gen+1
	c.st, c.used = csConnecting, false
	err = unix.Connect(fd, l.sa)
	events := uint32(unix.EPOLLOUT)
	switch {
	case err == nil:
		c.st, events = csOpen, unix.EPOLLIN
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
	if err := l.p.Add(fd, events, int32(c.i), int32(c.gen)); err != nil {
		l.drop(c)
		return err
	}
	return nil
}

// finishConnect completes a connect that epoll reported writable.
func (l *loop) finishConnect(c *lconn) error {
	v, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && v != 0 {
		err = unix.Errno(v)
	}
	if err == nil && l.d.w.tls != nil {
		err = l.handshake(c)
	}
	if err == nil {
		err = l.p.Mod(c.fd, unix.EPOLLIN, int32(c.i), int32(c.gen))
	}
	if err != nil {
		l.drop(c)
		return err
	}
	c.st = csOpen
	return nil
}

// connect reopens c during a Run.
func (l *loop) connect(c *lconn, now int64) {
	if err := l.dialConn(c); err != nil {
		l.connectFailed(c, err, now)
		return
	}
	if c.st == csOpen {
		l.opened(c)
		return
	}
	c.until = now + l.dial
	l.alarm.Set(c.until)
}

func (l *loop) opened(c *lconn) {
	if c.reopen {
		c.reopen = false
		l.w.Reconnected(c.cause, c.resend)
		c.cause = ""
	}
	if c.resend > 0 {
		l.sendAgain(c)
		return
	}
	l.queue(c)
}

// connectFailed fails the batch the connection was reopened for, as the
// engine does for a goroutine's failed reopen, and pauses before retrying.
// A connection reopened to re-send requests fails those.
func (l *loop) connectFailed(c *lconn, err error, now int64) {
	l.drop(c)
	if c.resend > 0 {
		o := driver.Outcome{Class: driver.Error, Done: now, Msg: "connect: " + driver.Msg(err)}
		l.failOutstanding(c, &o)
		c.resend = 0
		c.cause = driver.CauseError
		l.pauseConn(c, now)
		return
	}
	c.cause = driver.CauseError
	if l.stopping {
		return
	}
	if l.deadline != 0 && now >= l.deadline {
		l.stopping = true
		return
	}
	seq0, k := l.w.Claim(l.pipeline)
	if k == 0 {
		l.stopping = true
		return
	}
	seq, o := seq0, driver.Outcome{Class: driver.Error, Done: now, Msg: "connect: " + driver.Msg(err)}
	for j := 0; j < k; j++ {
		o.Op = l.d.t.op(l.d.t.pick(seq + uint64(j)))
		l.w.Record(&o, now)
	}
	l.pauseConn(c, now)
}

// pauseConn schedules c's reopen after its back-off (driver.Backoff).
func (l *loop) pauseConn(c *lconn, now int64) {
	c.st, c.until, c.reopen = csBackoff, now+int64(c.backoff.Next()), true
	l.alarm.Set(c.until)
}

// drop closes c's socket; its partial state goes with it.
func (l *loop) drop(c *lconn) {
	if c.fd >= 0 {
		_ = unix.Close(c.fd) // also leaves the epoll set
	}
	c.fd, c.st, c.pend = -1, csDown, c.pend[:0]
	c.tc, c.tp = nil, nil
	c.out.Reset()
	c.p.reset()
}

// send writes a batch of k requests, the first with sequence number seq.
func (l *loop) send(c *lconn, seq uint64, k int, now int64) {
	c.sent, c.inflight, c.again = now, k, false
	l.inflight += k
	if t := l.d.t; t.multi() {
		c.idx, c.wbuf = c.idx[:0], c.wbuf[:0]
		for j := 0; j < k; j++ {
			i := t.pick(seq + uint64(j))
			c.idx = append(c.idx, i)
			c.wbuf = append(c.wbuf, t.reqs[i].bytes...)
		}
		c.done, c.p.head = 0, t.reqs[c.idx[0]].head
		c.out.Pending = c.wbuf
	} else {
		c.out.Pending = l.pipe[:k*len(l.d.t.request)]
	}
	if l.timeout > 0 {
		l.alarm.Set(now + l.timeout)
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
	k := c.resend
	c.resend, c.again = 0, true
	if t := l.d.t; t.multi() {
		c.idx = append(c.idx[:0], c.idx[c.done:]...)
		c.wbuf = c.wbuf[:0]
		for _, i := range c.idx {
			c.wbuf = append(c.wbuf, t.reqs[i].bytes...)
		}
		c.done, c.p.head = 0, t.reqs[c.idx[0]].head
		c.out.Pending = c.wbuf
	} else {
		c.out.Pending = l.pipe[:k*len(l.d.t.request)]
	}
	if l.timeout > 0 {
		l.alarm.Set(c.sent + l.timeout) // still timed from the first send
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

// write writes what is left of the batch (evloop.Poller.Flush).
func (l *loop) write(c *lconn) {
	if err := l.p.Flush(c.fd, int32(c.i), int32(c.gen), &c.out); err != nil {
		l.lost(c, err)
	}
}

// event handles what epoll reported for c.
func (l *loop) event(c *lconn, ev uint32) {
	switch c.st {
	case csConnecting:
		if err := l.finishConnect(c); err != nil {
			l.connectFailed(c, err, driver.Now())
			return
		}
		l.opened(c)
	case csOpen:
		if ev&unix.EPOLLOUT != 0 && len(c.out.Pending) > 0 {
			l.write(c)
			if c.st != csOpen {
				return
			}
		}
		if ev&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			l.read(c)
		}
	}
}

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
	n, err := evloop.ReadNonblock(c.fd, l.buf[m:])
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

// consume parses data (c's unparsed bytes, then what arrived) and
// completes every whole response in it, keeping the partial rest. It
// returns false when c was closed.
func (l *loop) consume(c *lconn, data []byte, now int64) bool {
	if c.inflight == 0 {
		l.unsolicited(c, now)
		return false
	}
	for len(data) > 0 {
		k, done, err := c.p.parse(data)
		data = data[k:]
		if err != nil {
			l.fail(c, err)
			return false
		}
		if !done {
			break
		}
		if c.inflight == 1 && len(data) > 0 {
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
	c.cause = driver.CauseError
	if !l.stopping {
		if seq, k := l.w.Claim(1); k > 0 {
			_, msg := failure(errUnsolicited)
			op := l.d.t.op(l.d.t.pick(seq))
			l.w.Record(&driver.Outcome{Class: driver.Error, Op: op, Done: now, Msg: msg}, now)
		}
	}
	if l.stopping {
		c.reopen = true // reopened by the next Run
		return
	}
	l.pauseConn(c, now)
}

// complete records the response the parser holds. It returns false when c
// was closed (the server asked for it, or closed inside a pipeline).
func (l *loop) complete(c *lconn, now int64) bool {
	if c.inflight == 0 {
		return true // unsolicited: nothing to account it to
	}
	r := &c.p.r
	o := driver.Outcome{Class: driver.OK, Bytes: r.bytes, Done: now}
	if t := l.d.t; t.ops != nil {
		o.Op = t.op(c.idx[len(c.idx)-c.inflight])
	}
	if msg := l.d.check(r); msg != "" {
		o.Class, o.Msg = driver.Unexpected, msg
	}
	c.inflight--
	c.used = true
	if !c.stale {
		l.inflight--
		l.w.Record(&o, c.sent)
	} else {
		// outstanding at a window's end: counted then, and now only as
		// answered after it
		if o.Class == driver.OK {
			o.Class = driver.Drained
			l.w.Record(&o, c.sent)
		}
		if c.inflight == 0 {
			c.stale = false
			l.stale--
		}
	}
	if t := l.d.t; t.multi() && c.inflight > 0 {
		c.done++
		c.p.head = t.reqs[c.idx[c.done]].head
	}
	if r.close {
		if c.inflight > 0 {
			l.fail(c, errCloseInPipeline)
			return false
		}
		// Connection: close on a healthy connection: reopen at once.
		c.backoff.Reset()
		l.drop(c)
		c.cause = driver.CauseClose
		if !l.stopping {
			c.reopen = true
			l.connect(c, now)
		}
		return false
	}
	if c.inflight == 0 {
		c.backoff.Reset()
		l.queue(c)
	}
	return true
}

// failOutstanding records o for each request c has outstanding (none
// when they were outstanding at a window's end: reported then).
func (l *loop) failOutstanding(c *lconn, o *driver.Outcome) {
	if c.stale {
		c.inflight, c.stale = 0, false
		l.stale--
		return
	}
	t := l.d.t
	for ; c.inflight > 0; c.inflight-- {
		if t.ops != nil {
			o.Op = t.op(c.idx[len(c.idx)-c.inflight])
		}
		l.inflight--
		l.w.Record(o, c.sent)
	}
}

var errCloseInPipeline = errors.New("server closed the connection inside a pipeline")

// eof handles the server closing c.
func (l *loop) eof(c *lconn, now int64) {
	if c.inflight == 0 {
		l.idleEnded(c, driver.CauseIdleClosed, now)
		return
	}
	done, err := c.p.eof()
	if done {
		l.complete(c, now)
		return
	}
	l.lost(c, err)
}

// idleEnded reopens a connection the server closed or reset while no
// request was outstanding (its keep-alive timeout): not a failure.
func (l *loop) idleEnded(c *lconn, cause string, now int64) {
	l.drop(c)
	c.cause, c.reopen = cause, true
	if !l.stopping {
		l.connect(c, now)
	}
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
	if c.inflight == 0 {
		l.idleEnded(c, cs, driver.Now())
		return
	}
	if !c.used || c.p.started || c.again || c.stale || !l.retryable(c) {
		l.fail(c, err)
		return
	}
	c.resend = c.inflight
	l.drop(c)
	c.cause, c.reopen = cs, true
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
	l.failOutstanding(c, &driver.Outcome{Class: class, Done: now, Msg: msg})
	l.drop(c)
	c.cause = driver.CauseError
	l.pauseConn(c, now)
}
