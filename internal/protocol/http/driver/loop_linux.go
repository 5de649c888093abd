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
	evloop.Loop // the connections, the Run and its accounting
	d           *Driver
	sa          unix.Sockaddr
	family      int
	dial        int64 // connect timeout in ns

	conns []*lconn       // Loop.Conns, as the connections they are part of
	buf   []byte         // the read buffer, shared: one goroutine reads
	cbuf  []byte         // over TLS: the ciphertext read buffer, shared likewise
	fbuf  []byte         // on io_uring: a connection's unparsed bytes and what arrived (Feed)
	pipe  []byte         // the request repeated Pipeline times
	out   driver.Outcome // a response's outcome, reused (Record takes a pointer)
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
	sa, family, err := resolve(ctx, d.t.addr)
	if err != nil {
		return nil, err
	}
	dial := d.cfg.DialTimeout
	if dial <= 0 {
		dial = 5 * time.Second
	}
	if d.w.h2 {
		// streams refilled one by one (h2loop_linux.go)
		return d.openH2Loop(ctx, conns, sa, family, dial)
	}
	l := &loop{d: d, sa: sa, family: family, dial: int64(dial), buf: make([]byte, maxLine)}
	l.Timeout, l.IdleFirst = int64(d.cfg.Timeout), true
	if d.w.tls != nil {
		l.cbuf = make([]byte, 64<<10)
	}
	if err := l.Init(l, conns, l.dropAll); err != nil {
		l.P.Shutdown()
		return nil, err
	}
	if err := l.openAll(ctx, conns); err != nil {
		l.P.Shutdown()
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
		c := &lconn{p: parser{keepBody: l.d.keepBody(), head: l.d.t.head}}
		l.Add(&c.Conn)
		l.conns = append(l.conns, c)
		err := l.dialConn(c)
		if err != nil {
			return fmt.Errorf("connection %d of %d: connect to %s: %w", i+1, n, l.d.t.addr, err)
		}
		if c.St == evloop.Connecting {
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
		evs, err := l.P.Wait(ms)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if ev.Fd == evloop.WakeTag {
				continue
			}
			c := l.conns[ev.Fd]
			if c.St != evloop.Connecting {
				continue
			}
			if err := l.finishConnect(c); err != nil {
				return fmt.Errorf("connection %d of %d: connect to %s: %w", c.I+1, n, l.d.t.addr, err)
			}
			pending--
		}
	}
	return nil
}

// Run implements driver.Loop.
func (l *loop) Run(ctx context.Context, pipeline int, deadline int64, w driver.LoopWork) error {
	if k := max(pipeline, 1) * len(l.d.t.request); len(l.pipe) != k {
		l.pipe = bytes.Repeat(l.d.t.request, max(pipeline, 1))
	}
	return l.Loop.Run(ctx, pipeline, deadline, w)
}

// dropAll closes every connection's socket (evloop calls it once, when the
// loop's descriptors are closed).
func (l *loop) dropAll() {
	for _, c := range l.conns {
		l.drop(c)
	}
}

// The loop's evloop.Handler.

// Send implements evloop.Handler.
func (l *loop) Send(c *evloop.Conn, seq uint64, k int, now int64) {
	l.send(l.conns[c.I], seq, k, now)
}

// Read implements evloop.Handler.
func (l *loop) Read(c *evloop.Conn) { l.read(l.conns[c.I]) }

// Connected implements evloop.Handler.
func (l *loop) Connected(ec *evloop.Conn) {
	c := l.conns[ec.I]
	if err := l.finishConnect(c); err != nil {
		l.connectFailed(c, err, driver.Now())
		return
	}
	l.opened(c)
}

// WriteFailed implements evloop.Handler.
func (l *loop) WriteFailed(c *evloop.Conn, err error) { l.lost(l.conns[c.I], err) }

// Reopen implements evloop.Handler.
func (l *loop) Reopen(c *evloop.Conn, now int64) { l.connect(l.conns[c.I], now) }

// TimedOut implements evloop.Handler: a request, or a connect, that
// outlived its timeout.
func (l *loop) TimedOut(c *evloop.Conn, now int64) {
	if c.St == evloop.Connecting {
		l.connectFailed(l.conns[c.I], errRequestTimeout, now)
		return
	}
	l.fail(l.conns[c.I], errRequestTimeout)
}

// Drop implements evloop.Handler.
func (l *loop) Drop(c *evloop.Conn) { l.drop(l.conns[c.I]) }

// Op implements evloop.Handler.
func (l *loop) Op(ec *evloop.Conn, j int) uint8 {
	if t := l.d.t; t.ops != nil {
		c := l.conns[ec.I]
		return t.op(c.idx[len(c.idx)-j])
	}
	return 0
}

// errRequestTimeout is a request (or connect) that outlived its timeout.
var errRequestTimeout = fmt.Errorf("request: %w", errDeadline)

var errDeadline = context.DeadlineExceeded

var _ driver.PaceChecker = (*Driver)(nil)

// LoopsPace implements driver.PaceChecker: HTTP/1.1's loops pace a
// constant rate, and so do HTTP/2's (h2paced_linux.go). A failed ALPN
// probe says no: the goroutine path reports its error.
func (d *Driver) LoopsPace(ctx context.Context) bool {
	return d.resolve(ctx) == nil
}
