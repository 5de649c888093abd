package http

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
)

// MaxPipeline is the deepest pipeline the driver accepts.
const MaxPipeline = 1024

// Driver is the HTTP/1.1 driver.
type Driver struct {
	cfg Config
	t   *target
}

var _ driver.Driver = (*Driver)(nil)

// New checks the config and prepares the request bytes.
func New(cfg Config) (*Driver, error) {
	t, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	return &Driver{cfg: cfg, t: t}, nil
}

// Name implements driver.Driver.
func (d *Driver) Name() string { return "http" }

// Ops implements driver.Driver.
func (d *Driver) Ops() []string { return []string{"request"} }

// MaxPipeline implements driver.Driver.
func (d *Driver) MaxPipeline() int { return MaxPipeline }

// Addr is the host:port the driver dials.
func (d *Driver) Addr() string { return d.t.addr }

// Open implements driver.Driver: one keep-alive TCP connection.
func (d *Driver) Open(ctx context.Context, worker int) (driver.Conn, error) {
	dt := d.cfg.DialTimeout
	if dt <= 0 {
		dt = 5 * time.Second
	}
	nc, err := (&net.Dialer{Timeout: dt}).DialContext(ctx, "tcp", d.t.addr)
	if err != nil {
		return nil, err
	}
	return &conn{d: d, nc: nc, br: bufio.NewReaderSize(nc, 64<<10), keepBody: d.keepBody()}, nil
}

type conn struct {
	d        *Driver
	nc       net.Conn
	br       *bufio.Reader
	resp     response
	keepBody bool
	pipe     []byte    // the request repeated, for pipelined writes
	deadline time.Time // the deadline last set on nc
	once     sync.Once
}

// Do implements driver.Conn.
func (c *conn) Do(ctx context.Context, reqs []driver.Request, out []driver.Outcome) error {
	if err := c.setDeadline(); err != nil {
		return c.fail(out, 0, err)
	}
	// Let the other connections read their responses first: requests then
	// leave in bursts, as wrk's event loop sends them, and the server
	// answers in bursts (fewer wake-ups on both sides).
	runtime.Gosched()
	if _, err := c.nc.Write(c.payload(len(reqs))); err != nil {
		return c.fail(out, 0, err)
	}
	// Let the other connections send before reading: the response takes a
	// round trip, and a read now mostly finds nothing (EAGAIN), costing a
	// syscall before the goroutine parks anyway.
	if c.br.Buffered() == 0 {
		runtime.Gosched()
	}
	var closing bool
	for i := range out {
		r := &c.resp
		err := readResponse(c.br, r, c.keepBody, c.d.t.head)
		if err != nil {
			return c.fail(out, i, err)
		}
		out[i] = driver.Outcome{Class: driver.OK, Bytes: r.bytes, Done: driver.Now()}
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
	if closing {
		return errServerClose
	}
	return nil
}

var errServerClose = errors.New("server asked to close the connection")

func (c *conn) payload(n int) []byte {
	req := c.d.t.request
	if n == 1 {
		return req
	}
	if len(c.pipe) < n*len(req) {
		c.pipe = bytes.Repeat(req, n)
	}
	return c.pipe[:n*len(req)]
}

// setDeadline keeps the connection's deadline at about now + timeout. It is
// moved only when it would move by more than a twentieth of the timeout (at
// least 1 ms): resetting a deadline costs a runtime timer update, and doing it
// on every request is measurable at high rates. A request therefore times out
// between 95 % and 100 % of the timeout after it was sent.
func (c *conn) setDeadline() error {
	to := c.d.cfg.Timeout
	if to <= 0 {
		return nil
	}
	slack := to / 20
	if slack < time.Millisecond {
		slack = time.Millisecond
	}
	dl := time.Now().Add(to)
	if dl.Sub(c.deadline) < slack {
		return nil
	}
	c.deadline = dl
	return c.nc.SetDeadline(dl)
}

// check returns why a response is not the expected one, or "".
func (c *conn) check(r *response) string { return c.d.check(r) }

// keepBody reports whether responses' bodies must be kept for a check.
func (d *Driver) keepBody() bool {
	return d.cfg.ExpectBody != nil || d.cfg.ExpectBodyContains != ""
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
	class, msg := driver.Error, driver.Msg(err)
	if driver.IsTimeout(err) {
		class, msg = driver.Timeout, "timeout"
	} else if errors.Is(err, errMalformed) {
		msg = "malformed response"
	}
	for i := from; i < len(out); i++ {
		out[i] = driver.Outcome{Class: class, Done: now, Msg: msg}
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
func (d *Driver) Probe(ctx context.Context) error {
	c, err := d.Open(ctx, -1)
	if err != nil {
		return err
	}
	defer c.Close()
	cc := c.(*conn)
	out := make([]driver.Outcome, 1)
	if err := c.Do(ctx, make([]driver.Request, 1), out); err != nil && !errors.Is(err, errServerClose) {
		return fmt.Errorf("first request to %s failed: %w", d.cfg.URL, err)
	}
	if out[0].Class != driver.OK {
		return fmt.Errorf("first request to %s: %s (body: %q)", d.cfg.URL, out[0].Msg, clip(cc.resp.body))
	}
	return nil
}
