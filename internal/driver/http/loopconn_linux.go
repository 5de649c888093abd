//go:build linux

package http

import (
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
	reopen   bool // count a reconnect when the connect completes
	queued   bool // in loop.ready
	inflight int  // responses outstanding in the batch
	sent     int64
	out      evloop.Outbox // the unwritten rest of the batch
	pend     []byte        // unparsed bytes (at most a partial line)
	p        parser
}

// dialConn starts a non-blocking connect on a new socket.
func (l *loop) dialConn(c *lconn) error {
	fd, err := unix.Socket(l.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	c.fd, c.gen = fd, c.gen+1
	c.st = csConnecting
	err = unix.Connect(fd, l.sa)
	events := uint32(unix.EPOLLOUT)
	switch {
	case err == nil:
		c.st, events = csOpen, unix.EPOLLIN
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
		l.w.Reconnected()
	}
	l.queue(c)
}

// connectFailed fails the batch the connection was reopened for, as the
// engine does for a goroutine's failed reopen, and pauses before retrying.
func (l *loop) connectFailed(c *lconn, err error, now int64) {
	l.drop(c)
	if l.stopping {
		return
	}
	if l.deadline != 0 && now >= l.deadline {
		l.stopping = true
		return
	}
	_, k := l.w.Claim(l.pipeline)
	if k == 0 {
		l.stopping = true
		return
	}
	o := driver.Outcome{Class: driver.Error, Done: now, Msg: "connect: " + driver.Msg(err)}
	for j := 0; j < k; j++ {
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
	c.out.Reset()
	c.p.reset()
}

// send writes a batch of k requests.
func (l *loop) send(c *lconn, k int, now int64) {
	c.sent, c.inflight = now, k
	l.inflight += k
	c.out.Pending = l.pipe[:k*len(l.d.t.request)]
	if l.timeout > 0 {
		l.alarm.Set(now + l.timeout)
	}
	l.write(c)
}

// write writes what is left of the batch (evloop.Poller.Flush).
func (l *loop) write(c *lconn) {
	if err := l.p.Flush(c.fd, int32(c.i), int32(c.gen), &c.out); err != nil {
		l.fail(c, err)
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
func (l *loop) read(c *lconn) {
	m := copy(l.buf, c.pend)
	n, err := evloop.ReadNonblock(c.fd, l.buf[m:])
	if err != nil {
		if err != unix.EAGAIN {
			l.fail(c, err)
		}
		return
	}
	now := driver.Now()
	if n == 0 {
		l.eof(c, now)
		return
	}
	data := l.buf[:m+n]
	for len(data) > 0 {
		k, done, err := c.p.parse(data)
		data = data[k:]
		if err != nil {
			l.fail(c, err)
			return
		}
		if !done {
			break
		}
		if !l.complete(c, now) {
			return
		}
	}
	c.pend = append(c.pend[:0], data...)
}

// complete records the response the parser holds. It returns false when c
// was closed (the server asked for it, or closed inside a pipeline).
func (l *loop) complete(c *lconn, now int64) bool {
	if c.inflight == 0 {
		return true // unsolicited: nothing to account it to
	}
	r := &c.p.r
	o := driver.Outcome{Class: driver.OK, Bytes: r.bytes, Done: now}
	if msg := l.d.check(r); msg != "" {
		o.Class, o.Msg = driver.Unexpected, msg
	}
	c.inflight--
	l.inflight--
	l.w.Record(&o, c.sent)
	if r.close {
		if c.inflight > 0 {
			l.fail(c, errCloseInPipeline)
			return false
		}
		// Connection: close on a healthy connection: reopen at once.
		c.backoff.Reset()
		l.drop(c)
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

var errCloseInPipeline = errors.New("server closed the connection inside a pipeline")

// eof handles the server closing c.
func (l *loop) eof(c *lconn, now int64) {
	if c.inflight == 0 {
		l.drop(c) // closed while idle: reopened without a failure
		if !l.stopping {
			c.reopen = true
			l.connect(c, now)
		}
		return
	}
	done, err := c.p.eof()
	if done {
		l.complete(c, now)
		return
	}
	l.fail(c, err)
}

// fail fails c's outstanding requests with err, closes it and schedules its
// reopen after a pause. Messages are the blocking driver's.
func (l *loop) fail(c *lconn, err error) {
	now := driver.Now()
	class, msg := driver.Error, driver.Msg(err)
	if driver.IsTimeout(err) {
		class, msg = driver.Timeout, "timeout"
	} else if errors.Is(err, errMalformed) {
		msg = "malformed response"
	}
	o := driver.Outcome{Class: class, Done: now, Msg: msg}
	for ; c.inflight > 0; c.inflight-- {
		l.inflight--
		l.w.Record(&o, c.sent)
	}
	l.drop(c)
	l.pauseConn(c, now)
}
