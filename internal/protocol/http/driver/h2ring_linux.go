//go:build linux

package http

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// HTTP/2's closed loop on io_uring (evloop's ring, ringpoll_linux.go): its
// open connections receive into the ring's buffers (RingFeed: the bytes go
// to the frames, through the tlsPipe over TLS, as a read's would), a
// pass's frames leave in one send per connection, submitted with the wait
// in the pass's one io_uring_enter. A connection has one send in flight at
// a time (RingSend): its frames wait in the outbox's other array until the
// send ends (RingSent), then leave together. A rate's Run stays on epoll
// (its waits are for due times, and most passes send one request).

// errShortSend is a send on the ring that ended before all of it was sent.
var errShortSend = errors.New("short send on io_uring")

// ringBegin puts a closed loop's Run on a ring, if it may go there
// (Poller.RingBegin), and moves the open connections onto it.
func (l *h2loop) ringBegin() bool {
	if l.paced != nil || !l.P.RingBegin(&l.ringBufs, len(l.conns)) {
		return false
	}
	for _, c := range l.conns {
		if c.st == evloop.Open && c.fd >= 0 {
			if err := l.P.OnRing(c.fd, c.i, c.gen, &c.out); err != nil {
				l.lost(c, err)
			} else if len(c.out.Pending) > 0 { // what a full socket left
				l.ringSend(c)
			}
		}
	}
	return true
}

// ringEnd ends the ring and puts the open connections back in the epoll
// set, writing what waited for a send on the ring to end.
func (l *h2loop) ringEnd() {
	l.P.RingEnd(l)
	for _, c := range l.conns {
		c.sending = false
		if c.st != evloop.Open || c.fd < 0 {
			continue
		}
		if err := l.P.Add(c.fd, unix.EPOLLIN, int32(c.i), int32(c.gen)); err != nil && !errors.Is(err, unix.EEXIST) {
			l.lost(c, err)
			continue
		}
		if len(c.out.Pending) > 0 {
			l.write(c)
		}
	}
}

// ringSend sends c's outbox on the ring, unless a send of c's is in flight
// (RingSent sends it when that one ends). The array sent is kept in obuf2
// until then, and the other one becomes the outbox's.
func (l *h2loop) ringSend(c *h2lc) {
	if c.sending || len(c.out.Pending) == 0 {
		return
	}
	b := c.out.Pending
	c.out.Pending, c.sending = nil, true
	c.obuf, c.obuf2 = c.obuf2[:0], b
	if err := l.P.RingSend(c.fd, c.i, c.gen, b); err != nil {
		c.sending = false
		l.lost(c, err)
	}
}

// RingConn implements evloop.RingUser.
func (l *h2loop) RingConn(tag int, gen uint32) (int, bool) {
	if tag >= len(l.conns) {
		return -1, false
	}
	c := l.conns[tag]
	return c.fd, c.st == evloop.Open && c.gen&0xffffff == gen
}

// RingFeed implements evloop.RingUser: what arrived on a connection, its
// frames handled as read handles them.
func (l *h2loop) RingFeed(tag int, b []byte) {
	c := l.conns[tag]
	if c.tc != nil {
		c.tp.arrived(b)
		l.decrypt(c)
		return
	}
	if len(b) == 0 {
		l.eof(c)
		return
	}
	gen, now := c.gen, driver.Now()
	for len(b) > 0 && c.gen == gen && c.st == evloop.Open {
		m := copy(l.buf, c.pend)
		k := copy(l.buf[m:], b)
		if k == 0 { // a partial frame fills the buffer: frames refuses it first
			l.fail(c, fmt.Errorf("HTTP/2: a partial frame of %d bytes", m))
			return
		}
		b = b[k:]
		l.frames(c, l.buf[:m+k], now)
	}
}

// RingReadFailed implements evloop.RingUser.
func (l *h2loop) RingReadFailed(tag int, err error) { l.lost(l.conns[tag], err) }

// RingSent implements evloop.RingUser: c's send ended; what its frames
// gathered since goes now.
func (l *h2loop) RingSent(tag int, n int, err error) {
	c := l.conns[tag]
	c.sending = false
	if err == nil && n != len(c.obuf2) {
		err = fmt.Errorf("%w: %d of %d bytes", errShortSend, n, len(c.obuf2))
	}
	if err != nil {
		l.lost(c, err)
		return
	}
	if l.P.Ring() {
		l.ringSend(c)
	}
}

// RingEvents implements evloop.RingUser.
func (l *h2loop) RingEvents(evs []unix.EpollEvent) { l.dispatch(evs) }

// coalesce sets the next wait on the ring (evloop's Poller.Coalesce): the
// connections busy are about those the requests in flight fill.
func (l *h2loop) coalesce() {
	l.P.Coalesce(min(l.inflight/l.pipeline, len(l.conns)), l.lat)
}
