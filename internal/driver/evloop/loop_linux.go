package evloop

import (
	"context"
	"math"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
)

// Loop is the skeleton of a driver.Loop: its connections, the Run (claim,
// send, wait, dispatch, timers), the accounting of requests in flight, and
// the end of a window at its deadline (in-flight requests reported
// Outstanding, their answers drained for DrainGrace, then their connections
// closed). A protocol brings the rest through its Handler: what a request's
// bytes are, how replies are read and parsed, how a connection is reopened.
//
// A protocol's loop embeds a Loop, and its connections embed a Conn each,
// added with Add. Everything runs on the Run's goroutine but Close.
type Loop struct {
	P       Poller  // the epoll set, the wake-up eventfd, Run/Close
	H       Handler // the protocol
	Conns   []*Conn
	Timeout int64 // per-request timeout in ns, 0 = none
	// Only, when set, is the one connection Run starts and scans.
	Only *Conn
	// IdleFirst makes Run handle what happened on the connections since the
	// last Run (a server closing them at its keep-alive timeout, bytes
	// nobody asked for) before anything is sent on them.
	IdleFirst bool

	// the state of the Run in progress
	Ctx      context.Context
	W        driver.LoopWork
	Pipeline int   // requests claimed per batch
	Deadline int64 // the window's end, 0 = none
	Stopping bool  // no more batches: the claim or the deadline said so
	Inflight int   // requests outstanding over all connections (not stale)
	Alarm    Alarm // when scan must run next
	ended    bool  // the deadline passed: the in-flight requests were reported Outstanding
	stale    int   // connections whose requests were reported Outstanding, answers not all in
	ready    []*Conn
	// seen is the pass's last clock reading (sendReady's, or the one after
	// a wait), from which the next wait's length is reckoned: at most one
	// sendReady old, which the wait's rounding up to a millisecond dwarfs.
	seen int64

	// an open loop's (Run with a driver.PacedWork)
	paced  driver.PacedWork
	idle   []*Conn // open connections with nothing in flight
	stamp  int64   // the last send's time: each send gets its own
	wakeAt int64   // when the next due request wants a wake-up
	// dueAtEnd: the work was told what fell due by the deadline
	dueAtEnd bool

	// a Run on io_uring's (ringloop_linux.go)
	feeder   Feeder
	ringBufs []byte // the rings' buffers, kept from Run to Run
}

// State is where a loop connection stands.
type State uint8

const (
	Down       State = iota // no socket
	Connecting              // non-blocking connect in progress
	Open                    // connected
	Backoff                 // failed: reopened at Until
)

// Conn is the loop's part of a connection.
type Conn struct {
	I        int    // index in Loop.Conns, the tag of its epoll events
	Fd       int    // the socket, -1 when none
	Gen      uint32 // bumped per socket, carried in its epoll events
	St       State
	Until    int64 // connect deadline (Connecting) or reopen time (Backoff)
	Backoff  driver.Backoff
	Reopen   bool   // count a reconnect when the reopen completes
	Cause    string // why the last socket ended (driver.Cause…), reported at the reopen
	Inflight int    // requests outstanding on the connection
	Stale    bool   // they were reported Outstanding at a window's end: their answers are dropped
	Sent     int64  // when they were first sent
	Resend   int    // requests to send again once the new socket is open
	Out      Outbox // the unwritten rest of the requests
	queued   bool   // in Loop.ready
	idle     bool   // in Loop.idle (an open loop's)
}

// Handler is a protocol's side of a Loop. Its methods are called on the
// Run's goroutine, with a connection of Loop.Conns; the loop calls one
// per batch sent, read, event or timer, never per byte.
type Handler interface {
	// Send sends the batch of k requests claimed from seq on open c, which
	// has none in flight: it sets c.Inflight and c.Sent (now), adds to
	// Loop.Inflight, and writes (Loop.Write). The loop times the batch
	// out from now.
	Send(c *Conn, seq uint64, k int, now int64)
	// Read reads what arrived on open c and handles the replies in it.
	Read(c *Conn)
	// Connected finishes the connect of c (Connecting) that epoll reported.
	Connected(c *Conn)
	// WriteFailed handles an error writing c's outbox.
	WriteFailed(c *Conn, err error)
	// Reopen reopens c, down or at the end of its back-off, during a Run.
	Reopen(c *Conn, now int64)
	// TimedOut handles c's requests outliving Loop.Timeout (Open), or its
	// connect its deadline (Connecting).
	TimedOut(c *Conn, now int64)
	// Drop closes c's socket, with its partial protocol state.
	Drop(c *Conn)
	// Op is the operation (driver.Outcome.Op) of c's request j (1: the
	// last) counted back from the end of its batch.
	Op(c *Conn, j int) uint8
}

// Init prepares the loop for n connections driven by h. closeConns closes
// their sockets, once, when the loop's descriptors are closed. After a
// failed Init, P.Shutdown releases what was created.
func (l *Loop) Init(h Handler, n int, closeConns func()) error {
	l.H = h
	return l.P.Init(min(n+1, 1024), closeConns)
}

// Add adds c, with no socket yet, to the loop's connections.
func (l *Loop) Add(c *Conn) {
	c.I, c.Fd = len(l.Conns), -1
	l.Conns = append(l.Conns, c)
}

// Close implements driver.Loop.
func (l *Loop) Close() error { return l.P.Close() }

// Run implements driver.Loop's Run: it returns nil once the work is
// claimed and answered (or the window drained), ctx's error when ctx ends,
// ErrClosed after Close, or the epoll set's error.
func (l *Loop) Run(ctx context.Context, pipeline int, deadline int64, w driver.LoopWork) error {
	if err := l.P.Begin(); err != nil {
		return err
	}
	defer l.P.End()
	stop := context.AfterFunc(ctx, l.P.Wake)
	defer stop()

	l.Ctx, l.W, l.Pipeline, l.Deadline, l.Stopping, l.Inflight = ctx, w, max(pipeline, 1), deadline, false, 0
	l.ended, l.stale = false, 0
	l.paced, _ = w.(driver.PacedWork)
	if l.paced != nil {
		l.P.NoBusyPoll()
		l.Pipeline = 1 // each request is sent when due
		for _, c := range l.idle {
			c.idle = false
		}
		clear(l.idle)
		l.idle, l.wakeAt, l.dueAtEnd = l.idle[:0], math.MaxInt64, false
		defer func() { _ = l.P.Arm(driver.Now(), math.MaxInt64) }()
	}
	defer func() { l.W, l.Ctx, l.paced = nil, nil, nil }()
	if l.IdleFirst {
		evs, err := l.P.Wait(0)
		if err != nil {
			return err
		}
		l.dispatch(evs)
	}
	if l.ringBegin() {
		defer l.ringEnd()
	}
	l.seen = driver.Now()
	l.scan(l.seen)
	for _, c := range l.Conns {
		if l.Only != nil && c != l.Only {
			continue
		}
		switch c.St {
		case Open:
			l.Queue(c)
		case Down:
			c.Reopen = true
			l.H.Reopen(c, driver.Now())
		}
	}
	for {
		if l.paced != nil {
			l.sendDue()
		} else {
			l.sendReady()
		}
		if l.Deadline != 0 && l.Stopping {
			if now := driver.Now(); now >= l.Deadline {
				if !l.ended {
					l.endWindow()
				}
				if l.stale > 0 && now >= l.Deadline+int64(driver.DrainGrace) {
					l.cutStale()
				}
			}
		}
		if l.Stopping && l.Inflight == 0 && l.stale == 0 {
			return nil
		}
		ms := l.Alarm.WaitMS(l.seen)
		if l.paced != nil {
			now := driver.Now()
			if err := l.P.Arm(now, l.wakeAt); err != nil {
				return err
			}
			ms = l.Alarm.WaitMS(now)
		}
		var evs []unix.EpollEvent
		var err error
		if l.P.ring != nil {
			err = l.P.RingWait(ms, loopRing{l}) // and dispatch
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
			return ErrClosed
		}
		l.dispatch(evs)
		if l.seen = driver.Now(); l.Alarm.Due(l.seen) {
			l.scan(l.seen)
		}
	}
}

// dispatch handles a wait's events.
func (l *Loop) dispatch(evs []unix.EpollEvent) {
	for _, ev := range evs {
		if ev.Fd == WakeTag || ev.Fd == TimerTag {
			continue // Run checks the cancellation; a timer only wakes
		}
		c := l.Conns[ev.Fd]
		if uint32(ev.Pad) != c.Gen {
			continue // an event of a socket closed earlier in this pass
		}
		switch c.St {
		case Connecting:
			l.H.Connected(c)
		case Open:
			if ev.Events&unix.EPOLLOUT != 0 && len(c.Out.Pending) > 0 {
				l.Write(c)
				if c.St != Open {
					continue
				}
			}
			if ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				l.H.Read(c)
			}
		}
	}
}

// Write writes what is left of c's outbox (Poller.Flush).
func (l *Loop) Write(c *Conn) {
	if err := l.P.Flush(c.Fd, int32(c.I), int32(c.Gen), &c.Out); err != nil {
		l.H.WriteFailed(c, err)
	}
}

// Redial reopens c with open during a Run, on the loop's goroutine: bounded
// by timeout and never past the window's end. Reopened, c is queued (and a
// reconnect counted when c.Reopen says it was one). failed says the caller
// must fail what it claims for c, then Pause it: open failed (err) while
// the window goes on. Otherwise c is left down, or the Run cancelled, or
// the window over (Stopping set).
func (l *Loop) Redial(c *Conn, now int64, timeout time.Duration, open func(context.Context) error) (failed bool, err error) {
	if l.Stopping {
		c.St = Down
		return false, nil
	}
	end := now + int64(timeout)
	if l.Deadline != 0 {
		end = min(end, l.Deadline)
	}
	if end <= now {
		c.St = Down
		l.Stopping = l.Stopping || (l.Deadline != 0 && now >= l.Deadline)
		return false, nil
	}
	ctx, cancel := context.WithDeadline(l.Ctx, driver.Wall(end))
	err = open(ctx)
	cancel()
	if err == nil {
		if c.Reopen {
			cause := c.Cause
			if cause == "" {
				cause = driver.CauseError
			}
			c.Reopen, c.Cause = false, ""
			l.W.Reconnected(cause, 0)
		}
		l.Queue(c)
		return false, nil
	}
	if l.Ctx.Err() != nil {
		return false, err // Run sees the cancellation
	}
	if l.Deadline != 0 && now >= l.Deadline {
		l.Stopping = true
		return false, err
	}
	return true, err
}

// IdleEnded handles a connection the server closed or reset while no
// request was outstanding (a keep-alive or idle timeout): not a failure.
// c's socket is dropped and, unless the window is over, reopened, the
// reopen counting a reconnect for cause.
func (l *Loop) IdleEnded(c *Conn, cause string, now int64) {
	l.H.Drop(c)
	c.Cause, c.Reopen = cause, true
	if !l.Stopping {
		l.H.Reopen(c, now)
	}
}

// Queue marks open c to send its next batch in this pass.
func (l *Loop) Queue(c *Conn) {
	if !c.queued {
		c.queued = true
		l.ready = append(l.ready, c)
	}
}

// Pause schedules c's reopen after its back-off (driver.Backoff).
func (l *Loop) Pause(c *Conn, now int64) {
	c.St, c.Until, c.Reopen = Backoff, now+int64(c.Backoff.Next()), true
	l.Alarm.Set(c.Until)
}

// sendReady sends the next batch on every connection queued in this pass.
func (l *Loop) sendReady() {
	if len(l.ready) == 0 {
		return
	}
	now := driver.Now()
	l.seen = now
	if l.Deadline != 0 && now >= l.Deadline {
		l.Stopping = true
	}
	for i := 0; i < len(l.ready); i++ { // Send may queue again
		c := l.ready[i]
		c.queued = false
		if l.Stopping || c.St != Open || c.Inflight > 0 {
			continue
		}
		seq, k := l.W.Claim(l.Pipeline)
		if k == 0 {
			l.Stopping = true
			continue
		}
		if l.Timeout > 0 {
			l.Alarm.Set(now + l.Timeout)
		}
		l.H.Send(c, seq, k, now)
	}
	l.ready = l.ready[:0]
}

// scan handles what is due at now: request and connect timeouts, reopens
// after a pause, the deadline; and sets the next time to look.
func (l *Loop) scan(now int64) {
	l.Alarm.Clear()
	if l.Deadline != 0 {
		if now >= l.Deadline {
			l.Stopping = true
			if l.ended && l.stale > 0 {
				l.Alarm.Set(l.Deadline + int64(driver.DrainGrace))
			}
		} else {
			l.Alarm.Set(l.Deadline)
		}
	}
	for _, c := range l.Conns {
		if l.Only != nil && c != l.Only {
			continue // the others wait for the next Run
		}
		switch c.St {
		case Open:
			if c.Inflight > 0 && l.Timeout > 0 {
				if t := c.Sent + l.Timeout; now >= t {
					l.H.TimedOut(c, now)
				} else {
					l.Alarm.Set(t)
				}
			}
		case Connecting:
			if now >= c.Until {
				l.H.TimedOut(c, now)
			} else {
				l.Alarm.Set(c.Until)
			}
		case Backoff:
			if now < c.Until {
				l.Alarm.Set(c.Until)
			} else if l.Stopping {
				c.St = Down
			} else {
				c.Reopen = true
				l.H.Reopen(c, now)
			}
		}
	}
}
