//go:build linux

package http

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

var _ driver.Multiplexer = (*Driver)(nil)

// loop drives a window's connections from one goroutine with epoll, the way
// wrk does: one pass reads every connection that has data and parses the
// responses, the next sends the following batches of every connection whose
// batch completed. Reads and writes are raw non-blocking system calls on the
// loop's own epoll set; the loop parks in the Go runtime's poller only when
// no socket has anything (package evloop).
type loop struct {
	d       *Driver
	sa      unix.Sockaddr
	family  int
	timeout int64 // per-request timeout in ns, 0 = none
	dial    int64 // connect timeout in ns

	p     evloop.Poller // the epoll set, the wake-up eventfd, Run/Close
	conns []*lconn
	buf   []byte // the read buffer, shared: one goroutine reads
	cbuf  []byte // over TLS: the ciphertext read buffer, shared likewise

	// the state of the Run in progress
	w        driver.LoopWork
	pipeline int
	pipe     []byte // the request repeated pipeline times
	deadline int64
	stopping bool         // no more batches: the claim or the deadline said so
	inflight int          // responses outstanding over all connections
	ended    bool         // the deadline passed: the in-flight requests were reported Outstanding
	stale    int          // connections whose batch was reported Outstanding, answers not all in
	alarm    evloop.Alarm // when scan must run next
	ready    []*lconn
}

// OpenLoop implements driver.Multiplexer: conns connections on one epoll
// event loop. It waits until all are connected.
func (d *Driver) OpenLoop(ctx context.Context, conns int) (driver.Loop, error) {
	if conns < 1 {
		return nil, fmt.Errorf("open loop: want at least 1 connection, got %d", conns)
	}
	if err := d.resolve(ctx); err != nil {
		return nil, err
	}
	if d.w.h2 {
		// HTTP/2's streams are driven per connection: a goroutine each.
		return nil, fmt.Errorf("%w: HTTP/2 connections run on a goroutine each", driver.ErrNoLoop)
	}
	sa, family, err := resolve(ctx, d.t.addr)
	if err != nil {
		return nil, err
	}
	dial := d.cfg.DialTimeout
	if dial <= 0 {
		dial = 5 * time.Second
	}
	l := &loop{d: d, sa: sa, family: family, timeout: int64(d.cfg.Timeout), dial: int64(dial),
		buf: make([]byte, maxLine)}
	if d.w.tls != nil {
		l.cbuf = make([]byte, 64<<10)
	}
	if err := l.p.Init(min(conns+1, 1024), l.dropAll); err != nil {
		l.p.Shutdown()
		return nil, err
	}
	if err := l.openAll(ctx, conns); err != nil {
		l.p.Shutdown()
		return nil, err
	}
	return l, nil
}

// resolve turns host:port into a socket address, preferring IPv4.
func resolve(ctx context.Context, addr string) (unix.Sockaddr, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, 0, fmt.Errorf("address %q: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, 0, fmt.Errorf("address %q: bad port", addr)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return nil, 0, fmt.Errorf("resolve %q: %w", host, err)
	}
	ip := ips[0]
	for _, a := range ips {
		if a.Unmap().Is4() {
			ip = a
			break
		}
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return &unix.SockaddrInet4{Port: p, Addr: ip.As4()}, unix.AF_INET, nil
	}
	return &unix.SockaddrInet6{Port: p, Addr: ip.As16(), ZoneId: zoneID(ip)}, unix.AF_INET6, nil
}

func zoneID(ip netip.Addr) uint32 {
	if z := ip.Zone(); z != "" {
		if ifi, err := net.InterfaceByName(z); err == nil {
			return uint32(ifi.Index)
		}
	}
	return 0
}

// openAll connects every connection in parallel.
func (l *loop) openAll(ctx context.Context, n int) error {
	pending := 0
	for i := 0; i < n; i++ {
		c := &lconn{i: i, fd: -1, p: parser{keepBody: l.d.keepBody(), head: l.d.t.head}}
		l.conns = append(l.conns, c)
		err := l.dialConn(c)
		if err != nil {
			return fmt.Errorf("connection %d of %d: connect to %s: %w", i+1, n, l.d.t.addr, err)
		}
		if c.st == csConnecting {
			pending++
		}
	}
	until := driver.Now() + l.dial
	for pending > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		left := until - driver.Now()
		if left <= 0 {
			return fmt.Errorf("connect to %s: timed out after %s", l.d.t.addr, time.Duration(l.dial))
		}
		ms := int(min(left/1e6+1, 50))
		evs, err := l.p.Wait(ms)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if ev.Fd == evloop.WakeTag {
				continue
			}
			c := l.conns[ev.Fd]
			if c.st != csConnecting {
				continue
			}
			if err := l.finishConnect(c); err != nil {
				return fmt.Errorf("connection %d of %d: connect to %s: %w", c.i+1, n, l.d.t.addr, err)
			}
			pending--
		}
	}
	return nil
}

// Run implements driver.Loop.
func (l *loop) Run(ctx context.Context, pipeline int, deadline int64, w driver.LoopWork) error {
	if err := l.p.Begin(); err != nil {
		return errLoopClosed
	}
	defer l.p.End()
	stop := context.AfterFunc(ctx, l.p.Wake)
	defer stop()

	if pipeline < 1 {
		pipeline = 1
	}
	l.w, l.pipeline, l.deadline, l.stopping, l.inflight = w, pipeline, deadline, false, 0
	l.ended, l.stale = false, 0
	if len(l.pipe) != pipeline*len(l.d.t.request) {
		l.pipe = bytes.Repeat(l.d.t.request, pipeline)
	}
	defer func() { l.w = nil }()
	// What happened on the idle connections since the last Run (a server
	// closing them at its keep-alive timeout, bytes nobody asked for) is
	// handled before anything is sent on them.
	evs, err := l.p.Wait(0)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if ev.Fd == evloop.WakeTag {
			continue
		}
		if c := l.conns[ev.Fd]; uint32(ev.Pad) == c.gen {
			l.event(c, ev.Events)
		}
	}
	l.scan(driver.Now())
	for _, c := range l.conns {
		switch c.st {
		case csOpen:
			l.queue(c)
		case csDown:
			c.reopen = true
			l.connect(c, driver.Now())
		}
	}
	for {
		l.sendReady()
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
		evs, err := l.p.Wait(l.alarm.WaitMS(driver.Now()))
		if err != nil {
			return err
		}
		if l.p.Cancelled() {
			l.abort()
			if err := ctx.Err(); err != nil {
				return err
			}
			return errLoopClosed
		}
		for _, ev := range evs {
			if ev.Fd == evloop.WakeTag {
				continue // cancel was checked above
			}
			c := l.conns[ev.Fd]
			if uint32(ev.Pad) != c.gen {
				continue // an event of a socket closed earlier in this pass
			}
			l.event(c, ev.Events)
		}
		if now := driver.Now(); l.alarm.Due(now) {
			l.scan(now)
		}
	}
}

var errLoopClosed = evloop.ErrClosed

// endWindow ends the window at its deadline: every request still in
// flight is reported Outstanding (Done = the deadline). A batch on the
// wire stays on its connection, stale, for DrainGrace: its responses, when
// they come, are read and dropped (complete, failOutstanding); then
// cutStale closes the connection. Requests waiting for a reopen to be
// sent again are forgotten.
func (l *loop) endWindow() {
	l.ended = true
	l.alarm.Set(l.deadline + int64(driver.DrainGrace))
	t := l.d.t
	for _, c := range l.conns {
		if c.inflight == 0 || c.stale {
			continue
		}
		o := driver.Outcome{Class: driver.Outstanding, Done: l.deadline}
		for j := c.inflight; j > 0; j-- {
			if t.ops != nil {
				o.Op = t.op(c.idx[len(c.idx)-j])
			}
			l.w.Record(&o, c.sent)
		}
		l.inflight -= c.inflight
		if c.st == csOpen && c.resend == 0 {
			c.stale = true
			l.stale++
		} else {
			c.inflight, c.resend = 0, 0
		}
	}
}

// cutStale closes, DrainGrace after the deadline, the connections whose
// batch is still outstanding: the next Run reopens them (a reconnect with
// driver.CauseWindowEnd).
func (l *loop) cutStale() {
	for _, c := range l.conns {
		if c.stale {
			l.drop(c)
			c.inflight, c.stale = 0, false
			c.cause, c.reopen = driver.CauseWindowEnd, true
		}
	}
	l.stale = 0
}

// abort closes every connection after cancellation, forgetting the
// requests in flight.
func (l *loop) abort() {
	for _, c := range l.conns {
		l.drop(c)
		c.inflight, c.resend, c.stale = 0, 0, false
	}
	l.inflight, l.stale = 0, 0
}

// Close implements driver.Loop.
func (l *loop) Close() error { return l.p.Close() }

// dropAll closes every connection's socket (evloop calls it once, when the
// loop's descriptors are closed).
func (l *loop) dropAll() {
	for _, c := range l.conns {
		l.drop(c)
	}
}

// sendReady sends the next batch on every connection queued in this pass.
func (l *loop) sendReady() {
	if len(l.ready) == 0 {
		return
	}
	now := driver.Now()
	if l.deadline != 0 && now >= l.deadline {
		l.stopping = true
	}
	for _, c := range l.ready {
		c.queued = false
		if l.stopping || c.st != csOpen || c.inflight > 0 {
			continue
		}
		seq, k := l.w.Claim(l.pipeline)
		if k == 0 {
			l.stopping = true
			continue
		}
		l.send(c, seq, k, now)
	}
	l.ready = l.ready[:0]
}

func (l *loop) queue(c *lconn) {
	if !c.queued {
		c.queued = true
		l.ready = append(l.ready, c)
	}
}

// scan handles what is due at now: request and connect timeouts, reopens
// after a pause, the deadline; and sets the next time to look.
func (l *loop) scan(now int64) {
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
	for _, c := range l.conns {
		switch c.st {
		case csOpen:
			if c.inflight > 0 && l.timeout > 0 {
				if t := c.sent + l.timeout; now >= t {
					l.fail(c, errRequestTimeout)
				} else {
					l.alarm.Set(t)
				}
			}
		case csConnecting:
			if now >= c.until {
				l.connectFailed(c, errRequestTimeout, now)
			} else {
				l.alarm.Set(c.until)
			}
		case csBackoff:
			if now < c.until {
				l.alarm.Set(c.until)
			} else if l.stopping {
				c.st = csDown
			} else {
				c.reopen = true
				l.connect(c, now)
			}
		}
	}
}

// errRequestTimeout is a request (or connect) that outlived its timeout.
var errRequestTimeout = fmt.Errorf("request: %w", errDeadline)

var errDeadline = context.DeadlineExceeded
