package http

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
)

// MaxPipeline is the deepest pipeline the driver accepts.
const MaxPipeline = 1024

// Driver is the HTTP/1.1 driver.
type Driver struct {
	cfg Config
	t   *target
	w   wire
	// an exchange carried on the HTTP/2 streams (NewExchange): its
	// fields and whether it reads bodies
	x       Exchange
	xs      Streamer // x, when it reads bodies as they come
	xfields []string
	xkeep   bool
}

var _ driver.Driver = (*Driver)(nil)

// New checks the config and prepares the request bytes.
func New(cfg Config) (*Driver, error) {
	t, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	d := &Driver{cfg: cfg, t: t}
	if err := d.setupWire(); err != nil {
		return nil, err
	}
	return d, nil
}

// Name implements driver.Driver.
func (d *Driver) Name() string { return "http" }

// Ops implements driver.Driver: "request", or with 2–MaxOps requests
// (Config.Requests) each one's "METHOD /path", so the results break the
// figures down by request.
func (d *Driver) Ops() []string {
	if d.t.ops != nil {
		return d.t.ops
	}
	return []string{"request"}
}

// MaxPipeline implements driver.Driver.
func (d *Driver) MaxPipeline() int { return MaxPipeline }

// Addr is the host:port the driver dials.
func (d *Driver) Addr() string { return d.t.addr }

// Open implements driver.Driver: one keep-alive connection, over TLS for
// an https:// URL (the handshake made here), HTTP/2 when the wire says so.
func (d *Driver) Open(ctx context.Context, worker int) (driver.Conn, error) {
	if err := d.resolve(ctx); err != nil {
		return nil, err
	}
	nc, err := d.dialTCP(ctx)
	if err != nil {
		return nil, err
	}
	var rc syscall.RawConn
	if sc, ok := nc.(syscall.Conn); ok {
		rc, _ = sc.SyscallConn()
	}
	if d.w.h2 {
		return d.openH2(ctx, nc)
	}
	if d.w.tls != nil {
		tc, err := d.w.tls.handshake(ctx, nc, []string{ProtoHTTP1}, d.dialTimeout())
		if err != nil {
			return nil, err
		}
		nc = tc
	}
	c := &conn{d: d, nc: nc, rc: rc, tls: d.w.tls != nil, br: bufio.NewReaderSize(nc, 64<<10), keepBody: d.keepBody()}
	return c, nil
}

type conn struct {
	d        *Driver
	nc       net.Conn
	rc       syscall.RawConn // for the idle check (nil: none): the TCP socket's
	tls      bool            // nc is TLS: bytes on the idle socket may be TLS records (tickets)
	br       *bufio.Reader
	resp     response
	keepBody bool
	pipe     []byte    // the request repeated, for pipelined writes
	batch    []byte    // several requests: this Do's requests, written at once
	idx      []int     // several requests: the request index of each in the batch
	deadline time.Time // the deadline last set on nc
	used     bool      // a response completed: the connection is being reused
	last     int64     // when the last batch was answered (Now())
	once     sync.Once
}

// tlsIdleCheck is how long a TLS connection must have been idle before Do
// looks at it (idleCheck): over TLS the peek can only see the server's
// close (bytes may be TLS records), and a connection answered a moment ago
// is not one the server closed at its keep-alive timeout: this saves a
// system call per request on a busy connection. A close it misses is
// found by the read after the send, as a reconnect all the same.
const tlsIdleCheck = int64(50 * time.Millisecond)

// Do implements driver.Conn. A connection that ends before any byte of a
// response arrived, after it had carried responses, is a keep-alive
// connection the server closed: Do returns a *driver.Reconnect saying
// which requests may be sent again (see Config.RetryUnsafe). Bytes with no
// request outstanding (past the last response's framing, or found on the
// idle connection before a send) are an error.
func (c *conn) Do(ctx context.Context, reqs []driver.Request, out []driver.Outcome) error {
	payload := c.payload(reqs)
	if err := c.setDeadline(); err != nil {
		return c.fail(out, 0, err)
	}
	if c.used && (!c.tls || driver.Now()-c.last > tlsIdleCheck) {
		if err := c.idleCheck(out); err != nil {
			return err
		}
	}
	// Let the other connections read their responses first: requests then
	// leave in bursts, as wrk's event loop sends them, and the server
	// answers in bursts (fewer wake-ups on both sides).
	runtime.Gosched()
	if _, err := c.nc.Write(payload); err != nil {
		if c.used {
			return c.lost(out, 0, err)
		}
		return c.fail(out, 0, err)
	}
	// Let the other connections send before reading: the response takes a
	// round trip, and a read now mostly finds nothing (EAGAIN), costing a
	// syscall before the goroutine parks anyway.
	if c.br.Buffered() == 0 {
		runtime.Gosched()
	}
	t := c.d.t
	var closing bool
	for i := range out {
		r := &c.resp
		head := t.head
		if t.multi() {
			head = t.reqs[c.idx[i]].head
		}
		err := readResponse(c.br, r, c.keepBody, head)
		if err != nil {
			if r.bytes == 0 && c.used {
				return c.lost(out, i, err)
			}
			return c.fail(out, i, err)
		}
		c.used = true
		out[i] = driver.Outcome{Class: driver.OK, Bytes: r.bytes, Done: driver.Now()}
		if t.ops != nil {
			out[i].Op = t.op(c.idx[i])
		}
		if msg := c.check(r); msg != "" {
			out[i].Class, out[i].Msg = driver.Unexpected, msg
		}
		if r.close {
			closing = true
			if i < len(out)-1 {
				return c.fail(out, i+1, errors.New("server closed the connection inside a pipeline"))
			}
		}
	}
	c.last = driver.Now()
	if c.br.Buffered() > 0 {
		// body bytes past the framing, or a response nobody asked for:
		// the last response cannot be trusted, nor the connection.
		return c.fail(out, len(out)-1, errUnsolicited)
	}
	if closing {
		return &driver.Reconnect{Cause: driver.CauseClose, From: len(out)}
	}
	return nil
}

// payload returns the bytes of reqs, and with several requests notes which
// request each one is (c.idx).
func (c *conn) payload(reqs []driver.Request) []byte {
	t := c.d.t
	n := len(reqs)
	if !t.multi() {
		if n == 1 {
			return t.request
		}
		if len(c.pipe) < n*len(t.request) {
			c.pipe = bytes.Repeat(t.request, n)
		}
		return c.pipe[:n*len(t.request)]
	}
	c.batch, c.idx = c.batch[:0], c.idx[:0]
	for _, q := range reqs {
		i := t.pick(q.Seq)
		c.idx = append(c.idx, i)
		c.batch = append(c.batch, t.reqs[i].bytes...)
	}
	return c.batch
}

// idleCheck looks at the idle connection before a send without blocking
// (recv with MSG_PEEK): the server may have closed it (its keep-alive
// timeout), reset it, or sent bytes nobody asked for. net/http's Transport
// learns the same from the read it keeps posted on every idle connection.
func (c *conn) idleCheck(out []driver.Outcome) error {
	if c.rc == nil || c.br.Buffered() > 0 {
		if c.br.Buffered() > 0 {
			return c.fail(out, 0, errUnsolicited)
		}
		return nil
	}
	var n int
	var rerr error
	var b [1]byte
	err := c.rc.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	})
	switch {
	case err != nil:
		return c.fail(out, 0, err)
	case rerr == syscall.EAGAIN || rerr == syscall.EINTR:
		return nil
	case rerr != nil:
		c.fail(out, 0, rerr)
		return &driver.Reconnect{Cause: cause(rerr), Retry: true}
	case n > 0 && c.tls:
		// a TLS record (a session ticket, a close_notify alert): the
		// read after the send tells which.
		return nil
	case n > 0:
		return c.fail(out, 0, errUnsolicited)
	}
	c.fail(out, 0, io.EOF)
	return &driver.Reconnect{Cause: driver.CauseIdleClosed, Retry: true}
}

// lost handles a reused connection that ended before any byte of response
// from arrived: if it ended as keep-alive connections do (closed, reset),
// the requests from there on may be sent again on a new connection, when
// every one of them is safe to repeat. out[from:] hold the failure to count
// if they are not.
func (c *conn) lost(out []driver.Outcome, from int, err error) error {
	c.fail(out, from, err)
	cs := cause(err)
	if cs == "" {
		return err
	}
	return &driver.Reconnect{Cause: cs, From: from, Retry: c.d.t.retryable(c.idx[from:]), Written: true}
}

// cause says whether an I/O error is a keep-alive connection's end (the
// server closed or reset it) and which: "" for anything else (a timeout, a
// malformed response).
func cause(err error) string {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return driver.CauseIdleClosed
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return driver.CauseReset
	}
	return ""
}

// setDeadline keeps the connection's deadline at about now + timeout. It is
// moved only when it would move by more than a twentieth of the timeout (at
// least 1 ms): resetting a deadline costs a runtime timer update, and doing it
// on every request is measurable at high rates. A request therefore times out
// between 95 % and 100 % of the timeout after it was sent.
func (c *conn) setDeadline() error { return keepDeadline(c.nc, &c.deadline, c.d.cfg.Timeout) }

// keepDeadline moves nc's deadline (last set to *last) to now + to when
// it would move by more than a twentieth of to (at least 1 ms); to ≤ 0:
// none. Shared by the HTTP/1.1 and HTTP/2 connections.
func keepDeadline(nc net.Conn, last *time.Time, to time.Duration) error {
	if to <= 0 {
		return nil
	}
	slack := max(to/20, time.Millisecond)
	dl := time.Now().Add(to)
	if dl.Sub(*last) < slack {
		return nil
	}
	*last = dl
	return nc.SetDeadline(dl)
}

// retryable reports whether every request of a batch (its request
// indices; ignored with one request) may be sent again.
func (t *target) retryable(idx []int) bool {
	if !t.multi() {
		return t.reqs[0].retry
	}
	for _, i := range idx {
		if !t.reqs[i].retry {
			return false
		}
	}
	return true
}

// check returns why a response is not the expected one, or "".
func (c *conn) check(r *response) string { return c.d.check(r) }

// keepBody reports whether responses' bodies must be kept for a check.
func (d *Driver) keepBody() bool {
	return d.cfg.ExpectBody != nil || d.cfg.ExpectBodyContains != "" || d.xkeep
}

// check returns why a response is not the expected one, or "". Shared by the
// blocking connections and the event loop.
func (d *Driver) check(r *response) string {
	want := d.cfg.ExpectStatus
	if want == 0 && (r.status < 200 || r.status > 299) || want != 0 && r.status != want {
		return "status " + strconv.Itoa(r.status)
	}
	if d.keepBody() {
		if r.tooBig {
			return fmt.Sprintf("body over %d MiB, not checked", maxCheckedBody>>20)
		}
		if d.cfg.ExpectBody != nil && string(r.body) != *d.cfg.ExpectBody {
			return "body differs from the expected body"
		}
		if s := d.cfg.ExpectBodyContains; s != "" && !bytes.Contains(r.body, []byte(s)) {
			return "body lacks " + strconv.Quote(s)
		}
	}
	return ""
}

// fail fills out[from:] after an I/O error and reports the connection as
// unusable.
func (c *conn) fail(out []driver.Outcome, from int, err error) error {
	now := driver.Now()
	class, msg := failure(err)
	for i := from; i < len(out); i++ {
		out[i] = driver.Outcome{Class: class, Done: now, Msg: msg}
		if t := c.d.t; t.ops != nil && i < len(c.idx) {
			out[i].Op = t.op(c.idx[i])
		}
	}
	return err
}

// Close implements driver.Conn.
func (c *conn) Close() error {
	var err error
	c.once.Do(func() { err = c.nc.Close() })
	return err
}

// Probe performs one request on a fresh connection and returns a one-line
// error describing why it failed, so a quick run can refuse to start against
// a peer that is not the expected HTTP server.
//
// The probe is bounded by the request timeout, or by ProbeTimeout when
// there is none (--timeout 0), and ends at once when ctx does (Ctrl-C).
func (d *Driver) Probe(ctx context.Context) error {
	to := d.cfg.Timeout
	if to <= 0 {
		to = ProbeTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, to)
	defer cancel()
	c, err := d.Open(ctx, -1)
	if err != nil {
		return err
	}
	defer c.Close()
	var nc net.Conn
	switch cc := c.(type) {
	case *conn:
		nc = cc.nc
	case *h2conn:
		nc = cc.nc
	}
	if nc != nil {
		nc.SetDeadline(time.Now().Add(to))
		stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Now()) })
		defer stop()
	}
	out := make([]driver.Outcome, 1)
	var rc *driver.Reconnect
	if err := c.Do(ctx, make([]driver.Request, 1), out); err != nil && !(errors.As(err, &rc) && rc.From == 1) {
		if ctx.Err() == context.Canceled {
			return ctx.Err()
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("first request to %s: no response within %s (%s): %w", d.cfg.URL, to, probeBound(d.cfg.Timeout), err)
		}
		return fmt.Errorf("first request to %s failed: %w", d.cfg.URL, err)
	}
	if out[0].Class != driver.OK && d.x != nil {
		return fmt.Errorf("first request to %s: %s", d.cfg.URL, out[0].Msg)
	}
	if out[0].Class != driver.OK {
		var body []byte
		switch cc := c.(type) {
		case *conn:
			body = cc.resp.body
		case *h2conn:
			body = cc.st[0].resp.body
		}
		return fmt.Errorf("first request to %s: %s (body: %q)", d.cfg.URL, out[0].Msg, clip(body))
	}
	return nil
}

// ProbeTimeout bounds the pre-flight request when the run sets no request
// timeout (--timeout 0 means none for the load, never an endless check).
const ProbeTimeout = 10 * time.Second

// probeBound says where the pre-flight's bound came from.
func probeBound(timeout time.Duration) string {
	if timeout > 0 {
		return "the request timeout"
	}
	return "the pre-flight's bound; --timeout 0 sets none for the load only"
}
