//go:build linux

package http

import (
	"context"
	"fmt"
	"math"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// h2loop drives a window's HTTP/2 connections from one goroutine with
// epoll, refilling streams one by one as h2load does: the moment a stream
// ends (answered, reset, failed) its slot takes the next request, so each
// connection keeps Pipeline streams in flight (fewer when the server's
// SETTINGS_MAX_CONCURRENT_STREAMS or its flow-control window says so).
// The new streams of one pass leave in one write per connection.
//
// evloop.Loop accounts requests per batch (one send time per connection);
// here every stream has its own send time, so the loop keeps its own
// accounting, with evloop's rules: a request's latency runs from its first
// send, a re-sent one (GOAWAY, a reused connection closed under it) is
// timed from then; at the deadline every stream in flight is reported
// Outstanding (Done = the deadline), its answer, when it comes within
// driver.DrainGrace, Drained; then the connections still waiting are
// closed, to be reopened by the next Run (driver.CauseWindowEnd).
type h2loop struct {
	P      evloop.Poller
	d      *Driver
	sa     unix.Sockaddr
	family int
	dial   int64 // connect (and handshake, preface) timeout in ns
	conns  []*h2lc
	buf    []byte // plaintext read buffer, shared: one goroutine reads
	cbuf   []byte // over TLS: the ciphertext read buffer
	// ringBufs is the receive buffers of the Runs on io_uring, kept from
	// Run to Run (h2ring_linux.go)
	ringBufs []byte
	lat      int64 // the answers' latency, a moving average (ns)
	out      driver.Outcome

	// the Run in progress
	w        driver.LoopWork
	pipeline int
	deadline int64
	stopping bool
	inflight int // claimed requests not yet recorded (not stale)
	stale    int // streams reported Outstanding, on the wire still
	ended    bool
	alarm    evloop.Alarm
	ready    []*h2lc
	// seen is the pass's last clock reading (sendReady's, or the one after
	// a wait), from which the next wait's length is reckoned (as
	// evloop.Loop's).
	seen int64

	// at a constant rate (h2paced_linux.go)
	paced    driver.PacedWork
	wakeAt   int64 // when the next due request wants a wake-up
	nextDue  int64 // when the next request falls due (the work's Due)
	backlog  bool  // requests may wait in the work's backlog
	dueAtEnd bool  // the work was told the window ended
	stamp    int64 // the last send time given: each request has its own
	rr       int   // the connection the next request due tries first
}

// openH2Loop opens conns HTTP/2 connections on one event loop: each
// connected, its TLS handshake (ALPN h2) and its preface and settings
// exchanged before it returns.
func (d *Driver) openH2Loop(ctx context.Context, conns int, sa unix.Sockaddr, family int, dial time.Duration) (driver.Loop, error) {
	l := &h2loop{d: d, sa: sa, family: family, dial: int64(dial), buf: make([]byte, 64<<10)}
	if d.w.tls != nil {
		l.cbuf = make([]byte, 64<<10)
	}
	if err := l.P.Init(min(conns+1, 1024), l.dropAll); err != nil {
		l.P.Shutdown()
		return nil, err
	}
	for i := 0; i < conns; i++ {
		if err := ctx.Err(); err != nil {
			l.P.Shutdown()
			return nil, err
		}
		c := &h2lc{i: i, fd: -1}
		l.conns = append(l.conns, c)
		if err := l.open(c); err != nil {
			l.P.Shutdown()
			return nil, fmt.Errorf("connection %d of %d: %s: %w", i+1, conns, d.t.addr, err)
		}
	}
	return l, nil
}

// Close implements driver.Loop.
func (l *h2loop) Close() error { return l.P.Close() }

func (l *h2loop) dropAll() {
	for _, c := range l.conns {
		l.drop(c)
	}
}

// Run implements driver.Loop.
func (l *h2loop) Run(ctx context.Context, pipeline int, deadline int64, w driver.LoopWork) error {
	if err := l.P.Begin(); err != nil {
		return err
	}
	defer l.P.End()
	stop := context.AfterFunc(ctx, l.P.Wake)
	defer stop()
	l.w, l.pipeline, l.deadline, l.stopping = w, max(pipeline, 1), deadline, false
	l.inflight, l.stale, l.ended = 0, 0, false
	l.paced, _ = w.(driver.PacedWork)
	if l.paced != nil {
		l.P.NoBusyPoll() // its waits are for a due time
		l.wakeAt, l.nextDue, l.backlog, l.dueAtEnd = math.MaxInt64, 0, false, false
		for _, c := range l.conns {
			c.free = 0 // counted again as each is queued below
		}
		defer func() { _ = l.P.Arm(driver.Now(), math.MaxInt64) }()
	}
	defer func() { l.w, l.paced = nil, nil }()
	// what came while no Run was in progress (a GOAWAY, the server closing
	// idle connections, settings) is handled before anything is sent
	evs, err := l.P.Wait(0)
	if err != nil {
		return err
	}
	l.dispatch(evs)
	if l.ringBegin() {
		defer l.ringEnd()
	}
	l.seen = driver.Now()
	l.scan(l.seen)
	for _, c := range l.conns {
		switch c.st {
		case evloop.Open:
			l.queue(c)
		case evloop.Down:
			c.reopen = true
			l.connect(c, driver.Now())
		}
	}
	for {
		if l.paced != nil {
			l.sendDue()
		} else {
			l.sendReady()
		}
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
		ms := l.alarm.WaitMS(l.seen)
		if l.paced != nil {
			now := driver.Now()
			if err := l.P.Arm(now, l.wakeAt); err != nil {
				return err
			}
			ms = l.alarm.WaitMS(now)
		}
		var evs []unix.EpollEvent
		if l.P.Ring() {
			l.coalesce()
			err = l.P.RingWait(ms, l) // and dispatch
		} else {
			evs, err = l.P.Wait(ms)
		}
		if err != nil {
			return err
		}
		if l.P.Cancelled() {
			l.abort()
			if err := ctx.Err(); err != nil {
				return err
			}
			return evloop.ErrClosed
		}
		l.dispatch(evs)
		if l.seen = driver.Now(); l.alarm.Due(l.seen) {
			l.scan(l.seen)
		}
	}
}

// dispatch handles a wait's events.
func (l *h2loop) dispatch(evs []unix.EpollEvent) {
	for _, ev := range evs {
		if ev.Fd == evloop.WakeTag || ev.Fd == evloop.TimerTag {
			continue // Run checks the cancellation; a timer only wakes
		}
		c := l.conns[ev.Fd]
		if uint32(ev.Pad) != c.gen || c.st != evloop.Open {
			continue // a socket closed earlier in this pass
		}
		if ev.Events&unix.EPOLLOUT != 0 && len(c.out.Pending) > 0 {
			l.write(c)
			if c.st != evloop.Open {
				continue
			}
		}
		if ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			l.read(c)
		}
	}
}

// queue marks open c to start streams (and write) in this pass.
func (l *h2loop) queue(c *h2lc) {
	if !c.queued {
		c.queued = true
		l.ready = append(l.ready, c)
	}
}

// sendReady fills the free stream slots of every connection queued in
// this pass, then writes each one's frames at once.
func (l *h2loop) sendReady() {
	if len(l.ready) == 0 {
		return
	}
	now := driver.Now()
	l.seen = now
	if l.deadline != 0 && now >= l.deadline {
		l.stopping = true
	}
	for i := 0; i < len(l.ready); i++ { // a failure may queue again
		c := l.ready[i]
		c.queued = false
		if c.st != evloop.Open {
			continue
		}
		l.fill(c, now)
		if c.st == evloop.Open && len(c.wbuf) > 0 {
			l.flush(c)
		}
	}
	l.ready = l.ready[:0]
}

// record reports one stream's outcome: to the work, or, for a stream
// reported Outstanding at the window's end, as Drained when it is an
// answer.
func (l *h2loop) record(s *h2slot, o *driver.Outcome) {
	if s.stale {
		l.stale--
		if o.Class == driver.OK {
			o.Class = driver.Drained
			l.w.Record(o, s.sent)
		}
		return
	}
	l.inflight--
	l.w.Record(o, s.sent)
}

// pause schedules c's reopen after its back-off.
func (l *h2loop) pause(c *h2lc, now int64) {
	c.st, c.until, c.reopen = evloop.Backoff, now+int64(c.backoff.Next()), true
	l.alarm.Set(c.until)
}

// scan handles what is due at now: request timeouts (a connection's
// oldest stream), reopens after a pause, the deadline.
func (l *h2loop) scan(now int64) {
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
	to := int64(l.d.cfg.Timeout)
	for _, c := range l.conns {
		switch c.st {
		case evloop.Open:
			if oldest := c.oldest(); oldest != 0 && to > 0 {
				if t := oldest + to; now >= t {
					l.fail(c, errRequestTimeout)
				} else {
					l.alarm.Set(t)
				}
			}
		case evloop.Backoff:
			if now < c.until {
				l.alarm.Set(c.until)
			} else if l.stopping {
				c.st = evloop.Down
			} else {
				l.connect(c, now)
			}
		}
	}
}

// endWindow reports every request in flight Outstanding at the deadline:
// streams on the wire stay, stale, for their answers (drained); requests
// waiting for a new connection are forgotten.
func (l *h2loop) endWindow() {
	l.ended = true
	l.alarm.Set(l.deadline + int64(driver.DrainGrace))
	o := &l.out
	for _, c := range l.conns {
		for i := range c.slots {
			s := &c.slots[i]
			if s.id == 0 || s.stale {
				continue
			}
			*o = driver.Outcome{Class: driver.Outstanding, Done: l.deadline, Op: s.op}
			l.w.Record(o, s.sent)
			l.inflight--
			s.stale = true
			l.stale++
		}
		for i := range c.resend {
			*o = driver.Outcome{Class: driver.Outstanding, Done: l.deadline, Op: c.resend[i].op}
			l.w.Record(o, c.resend[i].sent)
			l.inflight--
		}
		c.resend = c.resend[:0]
	}
}

// cutStale closes, DrainGrace after the deadline, the connections with
// streams still outstanding: the next Run reopens them.
func (l *h2loop) cutStale() {
	for _, c := range l.conns {
		if c.stale() > 0 {
			l.drop(c)
			c.cause, c.reopen = driver.CauseWindowEnd, true
		}
	}
	l.stale = 0
}

// abort closes every connection after cancellation, forgetting the
// requests in flight.
func (l *h2loop) abort() {
	for _, c := range l.conns {
		l.drop(c)
		c.resend = c.resend[:0]
		c.reopen = true
		c.cause = driver.CauseError
	}
	l.inflight, l.stale = 0, 0
}
