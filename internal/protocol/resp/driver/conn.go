package resp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	wire "github.com/benchrig/benchrig/internal/resp"
)

// deadlineSlack is how far a new deadline may differ from the one already set
// before SetDeadline is called again: setting it costs a timer update, so
// back-to-back requests reuse it (firing at most this much early).
const deadlineSlack = time.Millisecond

// conn is one connection, owned by one worker: the goroutine path (an
// event loop drives its connections otherwise, loop_linux.go).
type conn struct {
	codec    // requests encoded, replies checked (from rd)
	nc       net.Conn
	rd       *wire.Reader
	wbuf     []byte // the commands of one Do
	deadline time.Time
	closed   atomic.Bool
}

func newConn(d *Driver, nc net.Conn) *conn {
	c := &conn{nc: nc, rd: wire.NewReader(nc, d.cfg.Limits)}
	c.codec = newCodec(d, c.rd)
	return c
}

// handshake authenticates and checks with PING that the peer speaks RESP.
func (c *conn) handshake() error {
	if !c.d.token.IsZero() {
		n := 2
		if c.d.cfg.Auth.User != "" {
			n = 3
		}
		c.wbuf = wire.AppendArrayHeader(c.wbuf[:0], n)
		c.wbuf = wire.AppendBulkString(c.wbuf, "AUTH")
		if n == 3 {
			c.wbuf = wire.AppendBulkString(c.wbuf, c.d.cfg.Auth.User)
		}
		c.wbuf = wire.AppendBulkString(c.wbuf, c.d.token.Reveal())
		_, err := c.nc.Write(c.wbuf)
		clear(c.wbuf) // the token does not linger in the buffer
		if err != nil {
			return fmt.Errorf("send AUTH: %w", err)
		}
		rep, err := c.rd.ReadReply()
		switch {
		case err != nil:
			return fmt.Errorf("AUTH: %w", err)
		case rep.Kind == wire.KindError:
			return fmt.Errorf("AUTH failed: %w", &wire.Error{Msg: c.d.redact(string(rep.Data))})
		case rep.Kind != wire.KindSimple || string(rep.Data) != "OK":
			c.sync()
			return fmt.Errorf("AUTH: want +OK, got a %s reply", rep.Kind)
		}
	}
	if c.d.cfg.NoPing {
		return nil
	}
	c.wbuf = wire.AppendCommandString(c.wbuf[:0], "PING")
	if _, err := c.nc.Write(c.wbuf); err != nil {
		return fmt.Errorf("send PING: %w", err)
	}
	rep, err := c.rd.ReadReply()
	switch {
	case errors.Is(err, io.EOF) && c.d.tlsConf == nil:
		return fmt.Errorf("PING: connection closed before a reply (is the port TLS-only? then set tls.enabled): %w", err)
	case err != nil:
		return fmt.Errorf("PING: %w", err)
	case rep.Kind == wire.KindError:
		e := &wire.Error{Msg: c.d.redact(string(rep.Data))}
		if e.Prefix() == "NOAUTH" {
			return fmt.Errorf("PING refused: %w (the server requires AUTH: set auth.token_file or auth.token_env)", e)
		}
		return fmt.Errorf("PING refused: %w", e)
	case rep.Kind != wire.KindSimple || string(rep.Data) != "PONG":
		c.sync()
		return fmt.Errorf("PING: want +PONG, got a %s reply", rep.Kind)
	}
	return nil
}

// Do sends the commands of all reqs in one write, then reads the replies in
// order. It returns an error only when the connection is unusable.
func (c *conn) Do(ctx context.Context, reqs []driver.Request, out []driver.Outcome) error {
	if len(reqs) > MaxPipeline || len(out) < len(reqs) {
		fail(out, 0, driver.Error, "driver misuse")
		return fmt.Errorf("resp: Do with %d requests and %d outcomes (max pipeline %d)", len(reqs), len(out), MaxPipeline)
	}
	if err := ctx.Err(); err != nil {
		fail(out[:len(reqs)], 0, driver.Error, "canceled")
		return err
	}
	if c.closed.Load() {
		fail(out[:len(reqs)], 0, driver.Error, "connection closed")
		return fmt.Errorf("resp: %s: %w", c.d.cfg.Addr, net.ErrClosed)
	}
	c.wbuf = c.wbuf[:0]
	for i := range reqs {
		c.wbuf = c.appendRequest(c.wbuf, reqs[i].Seq)
	}
	c.arm(ctx)
	if _, err := c.nc.Write(c.wbuf); err != nil {
		class, msg := c.d.classify(ctx, err)
		fail(out[:len(reqs)], 0, class, msg)
		return fmt.Errorf("resp: send %d commands to %s: %w", len(reqs), c.d.cfg.Addr, err)
	}
	defer c.flush()
	// Let the other workers send before reading: the replies take a round
	// trip, and a read now would mostly find nothing (EAGAIN) and cost a
	// syscall before parking anyway.
	runtime.Gosched()
	for i := range reqs {
		start := c.rd.Consumed()
		class, msg, err := c.readOne(reqs[i].Seq)
		if err != nil {
			class, msg = c.d.classify(ctx, err)
		}
		out[i] = driver.Outcome{Class: class, Bytes: c.rd.Consumed() - start, Done: driver.Now(), Msg: msg}
		if err != nil {
			fail(out[i+1:len(reqs)], out[i].Done, class, msg)
			return fmt.Errorf("resp: reply %d of %d from %s: %w", i+1, len(reqs), c.d.cfg.Addr, err)
		}
	}
	// Bytes past the last reply answer no request: the server is out of
	// step with the commands (a reply sent twice, say), and the replies
	// of this Do cannot be trusted either. In every mode a framing error,
	// as the HTTP driver's; the connection is replaced. (A field compare:
	// nothing is read for it.)
	if n := c.rd.Buffered(); n > 0 {
		last := &out[len(reqs)-1]
		last.Class, last.Msg = driver.Error, msgUnsolicited
		return fmt.Errorf("resp: %d bytes from %s after the last of %d replies, with no request outstanding", n, c.d.cfg.Addr, len(reqs))
	}
	return nil
}

// msgUnsolicited is the failure of bytes that arrived with no request
// outstanding.
const msgUnsolicited = "reply with no request outstanding"

// Close closes the connection; it is idempotent and may be called while Do
// runs, which then fails.
func (c *conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	return c.nc.Close()
}

// arm sets the connection's deadline for one Do: Timeout from now, or ctx's
// deadline if earlier; unchanged when within deadlineSlack of the last one.
func (c *conn) arm(ctx context.Context) {
	var want time.Time
	if t := c.d.cfg.Timeout; t > 0 {
		want = time.Now().Add(t)
	}
	if dl, ok := ctx.Deadline(); ok && (want.IsZero() || dl.Before(want)) {
		want = dl
	}
	if want.IsZero() {
		if !c.deadline.IsZero() {
			c.nc.SetDeadline(want)
			c.deadline = want
		}
		return
	}
	if diff := want.Sub(c.deadline); c.deadline.IsZero() || diff > deadlineSlack || diff < -deadlineSlack {
		c.nc.SetDeadline(want)
		c.deadline = want
	}
}

// fail fills outcomes that cannot complete.
func fail(out []driver.Outcome, done int64, class driver.Class, msg string) {
	if done == 0 {
		done = driver.Now()
	}
	for i := range out {
		out[i] = driver.Outcome{Class: class, Done: done, Msg: msg}
	}
}

// classify turns a connection error into an outcome class and a message from
// a small set; a reply over a limit names the limit (one message per limit).
func (d *Driver) classify(ctx context.Context, err error) (driver.Class, string) {
	class, msg := classify(ctx, err)
	var pe *wire.ProtocolError
	if msg == msgOverLimit && errors.As(err, &pe) {
		for i, name := range limitNames {
			if strings.Contains(pe.Msg, name+"=") {
				return class, d.overLimit[i]
			}
		}
	}
	return class, msg
}

// msgOverLimit is the failure of a reply over one of Config.Limits, when
// the error does not say which.
const msgOverLimit = "reply over limit"

// limitNames are the limits of wire.Limits as wire's errors name them; the
// Driver's overLimit holds the failure message of each.
var limitNames = [...]string{"MaxBulk", "MaxArray", "MaxDepth", "MaxLine"}

// overLimitMsgs returns the failure messages of replies over each limit
// of lim (defaults filled), in the order of limitNames.
func overLimitMsgs(lim wire.Limits) [len(limitNames)]string {
	v := [...]int{lim.MaxBulk, lim.MaxArray, lim.MaxDepth, lim.MaxLine}
	what := [...]string{"bulk string longer than", "array longer than", "arrays nested deeper than", "line longer than"}
	var out [len(limitNames)]string
	for i := range out {
		out[i] = fmt.Sprintf("%s (%s limits.%s=%d)", msgOverLimit, what[i], jsonLimit[i], v[i])
	}
	return out
}

// jsonLimit are the limits' names in the configuration.
var jsonLimit = [...]string{"max_bulk", "max_array", "max_depth", "max_line"}

// classify turns a connection error into an outcome class and a message from
// a small set.
func classify(ctx context.Context, err error) (driver.Class, string) {
	switch {
	case ctx.Err() != nil:
		return driver.Error, "canceled"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return driver.Timeout, "timeout"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return driver.Error, "connection closed mid-reply"
	case errors.Is(err, io.EOF):
		return driver.Error, "connection closed by peer"
	case errors.Is(err, wire.ErrLimit):
		return driver.Error, msgOverLimit
	case errors.Is(err, wire.ErrProtocol):
		return driver.Error, "protocol error"
	case errors.Is(err, net.ErrClosed):
		return driver.Error, "connection closed"
	case errors.Is(err, syscall.ECONNRESET):
		return driver.Error, "connection reset by peer"
	case errors.Is(err, syscall.EPIPE):
		return driver.Error, "broken pipe"
	}
	return driver.Error, "i/o error"
}
