//go:build linux

package http

import (
	"math"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// An h2loop at a constant rate (Run with a driver.PacedWork, h2load's
// --rps): a request due goes out on a free stream, so each connection
// carries up to Pipeline requests at once (its streams) where an HTTP/1.1
// loop at a rate carries one. A request is late when it falls due with
// every stream of every connection busy; it waits in the work's backlog
// for the next stream to end.

var (
	_ driver.PacedLoop   = (*h2loop)(nil)
	_ driver.StreamPacer = (*Driver)(nil)
)

// Paces implements driver.PacedLoop.
func (l *h2loop) Paces() bool { return true }

// PacesStreams implements driver.StreamPacer: HTTP/2's loops pace a rate
// with up to pipeline streams in flight per connection (Config.HTTP2,
// Config.H2C, an h2c:// URL); HTTP/1.1's send one request at a time per
// connection. An https:// server found to speak only h2 is not known
// before the run: give HTTP2.
func (d *Driver) PacesStreams() bool { return d.w.h2 && !d.w.auto }

// freeSlots is how many new streams c can start now: Pipeline (or the
// server's SETTINGS_MAX_CONCURRENT_STREAMS) less those on the wire and the
// requests waiting for it; 0 after a GOAWAY or when c is not open.
func (l *h2loop) freeSlots(c *h2lc) int {
	if c.st != evloop.Open || c.goaway {
		return 0
	}
	return max(0, min(l.pipeline, int(min(c.peerMaxStreams, 1<<20)))-c.active()-c.stale()-len(c.resend))
}

// sendDue is an open loop's pass: the connections queued in this pass
// send what waits for them (re-sent streams, control frames) and count
// their free streams again; then, when a request is due or waiting, the
// work moves what is due into its backlog and the free streams take the
// oldest requests, one connection after another, each with a send time of
// its own. Every queued connection's frames leave in one write. It sets
// wakeAt: the next due time when a stream is free to take it
// (math.MaxInt64 else: an answer wakes the loop first).
func (l *h2loop) sendDue() {
	now := driver.Now()
	if l.deadline != 0 && now >= l.deadline {
		if !l.dueAtEnd {
			// the window's end: what fell due before it and was not sent
			// is the work's to count (waiting, late; dropped)
			l.paced.Due(l.deadline-1, 0)
			l.dueAtEnd = true
		}
		l.stopping = true
	}
	freed := false
	for _, c := range l.ready {
		if c.st == evloop.Open {
			l.fill(c, now) // the re-sent streams; no Claim at a rate
			c.free = l.freeSlots(c)
			freed = freed || c.free > 0
		}
	}
	switch {
	case l.stopping:
		l.wakeAt = math.MaxInt64
	case now >= l.nextDue || l.backlog:
		l.take(now)
	case freed && l.wakeAt == math.MaxInt64:
		l.wakeAt = l.nextDue // nothing due yet; a stream is free for it
	}
	taken := len(l.ready)               // those queued by take are counted already
	for i := 0; i < len(l.ready); i++ { // a failed write may reconnect and queue again
		c := l.ready[i]
		c.queued = false
		if c.st != evloop.Open {
			continue
		}
		if i >= taken {
			l.fill(c, now) // queued since: a new socket's re-sent streams
			c.free = l.freeSlots(c)
		}
		if len(c.wbuf) > 0 {
			l.flush(c)
		}
	}
	l.ready = l.ready[:0]
}

// take moves what is due into the work's backlog and starts a stream for
// each request waiting while a stream is free: those of one pass on one
// connection while it has streams free (one write, and the server's
// answers in one), each pass beginning on the next connection in turn.
func (l *h2loop) take(now int64) {
	free := 0
	for _, c := range l.conns {
		if c.st != evloop.Open || c.goaway {
			c.free = 0
		}
		free += c.free
	}
	next, more := l.paced.Due(now, free)
	l.nextDue, l.backlog = next, true // until Take finds it empty
	for free > 0 {
		c := l.conns[l.rr]
		if c.free == 0 {
			l.turn()
			continue
		}
		at := max(now, l.stamp+1) // a send time of its own: the work keys each request by it
		seq, ok := l.paced.Take(at)
		if !ok {
			l.backlog = false
			l.turn() // the next pass begins on the next connection
			break
		}
		l.stamp = at
		c.free--
		free--
		l.inflight++
		i := l.d.t.pick(seq)
		s := h2slot{k: i, op: l.d.t.op(i), sent: at, seq: seq}
		if len(c.resend) > 0 || !l.start(c, &s, at) {
			c.resend = append(c.resend, s) // held until the window opens
		}
		l.queue(c)
	}
	l.wakeAt = math.MaxInt64
	if !more || (next == math.MaxInt64 && !l.backlog) {
		// the schedule is over (a count-bounded window): stop once
		// nothing waits (no later pass asks the work again)
		if _, waiting := l.paced.Due(now, 0); !waiting {
			l.stopping = true // the schedule is over and nothing waits
		}
		return
	}
	if free > 0 {
		l.wakeAt = next
	}
}

// turn moves the connection the next request due tries first along.
func (l *h2loop) turn() {
	if l.rr++; l.rr == len(l.conns) {
		l.rr = 0
	}
}
