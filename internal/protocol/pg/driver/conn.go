package pg

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/workload"
)

// Conn is one pgx connection with its statements prepared, owned by one
// worker. Close may be called concurrently with Do to abort it.
type Conn struct {
	d  *Driver
	pg *pgx.Conn
	mu sync.Mutex // held by Do and Fetch; Close aborts when it cannot take it

	// Per-request buffers, reused.
	keys  []int64
	rows  []any // the last read's rows, one per key; nil for a missing row
	vals  []any
	byKey map[int64]any // Fetch's any path: rows by key
	idx   keyIndex      // the hot path's any path: positions by key
	batch pgx.Batch
	bytes int64 // response bytes of the current operation

	// The hot path (fast.go): the statements it runs (nil: pgx runs
	// them), the encoded parameter, the decoder and its reused rows.
	read1     *stmt
	upd       *stmt
	params    [][]byte
	pbuf      []byte
	dec       rowDecoder
	slots     []*rowSlot
	slotWidth int // the keys every slot has cells for
	// The sql path's request in progress (sqlshape.go): DataRows seen,
	// rows placed, rows that held an array, whether the last placed was
	// nil.
	sqlN, sqlPlaced, sqlArrays int
	nullRow                    bool
	// planBase is the last PlanStats reading (plans.go).
	planBase map[string]PlanCount
	// The request timeout: a timer reset per request; when it fires,
	// onTimeout cancels and Do waits for it through these channels.
	timer      *time.Timer
	reqDone    chan struct{}
	cancelDone chan struct{}
}

// unexpected is a response that arrived but is not what was asked for.
type unexpected struct{ msg string }

func (e *unexpected) Error() string { return e.msg }

// errUnexpected builds an unexpected with a formatted message.
func errUnexpected(format string, args ...any) error {
	return &unexpected{msg: fmt.Sprintf(format, args...)}
}

// Do performs each request in turn: a read of the workload's keys along the
// driver's path, decoding every row from JSON, or a write through the update
// statement. A read is Unexpected when a key the dataset should hold has no
// row. Do returns an error only when the connection is lost.
//
// ctx is checked between requests, not watched during one (that costs an
// allocation and a goroutine hand-off per request): the engine aborts a
// request in flight with Close. The rows of a request are valid until the
// next one.
func (c *Conn) Do(ctx context.Context, reqs []driver.Request, out []driver.Outcome) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	bg := context.Background()
	for i, r := range reqs {
		if c.pg.IsClosed() {
			c.fail(reqs[i:], out[i:], "connection closed")
			return errors.New("pg: connection closed")
		}
		if ctx.Err() != nil {
			c.fail(reqs[i:], out[i:], "canceled")
			return fmt.Errorf("pg: %w", ctx.Err())
		}
		op, keys := c.d.wl.Keys(r.Seq, c.keys)
		out[i] = driver.Outcome{Op: c.d.wl.Index(op)}
		c.bytes = 0
		c.dec.reset()
		c.arm()
		var err error
		switch {
		case op == workload.Write && c.upd != nil:
			err = c.updateFast(keys[0])
		case op == workload.Write:
			err = c.update(bg, keys[0])
		case len(keys) == 0:
			err = errUnexpected("no keys: the cold workload has read every row")
		default:
			if err = c.readFor(bg, keys); err == nil {
				err = c.checkFound(keys)
			}
		}
		timedOut := c.disarm()
		o := &out[i]
		o.Bytes, o.Done = c.bytes, driver.Now()
		var u *unexpected
		var m *missing
		switch {
		case err == nil:
			o.Class = driver.OK
			continue
		case errors.As(err, &m):
			o.Class, o.Msg = driver.Miss, "row not found"
			continue
		case timedOut:
			o.Class, o.Msg = driver.Timeout, "timeout"
		case errors.As(err, &u):
			o.Class, o.Msg = driver.Unexpected, u.msg
		default:
			o.Class, o.Msg = driver.Error, shortMsg(err)
		}
		if ctx.Err() != nil {
			c.fail(reqs[i+1:], out[i+1:], "canceled")
			return fmt.Errorf("pg: %w", ctx.Err())
		}
		if c.pg.IsClosed() {
			c.fail(reqs[i+1:], out[i+1:], "connection closed")
			return fmt.Errorf("pg: connection lost: %s", shortMsg(err))
		}
	}
	return nil
}

// fail marks the outcomes of requests that were not attempted.
func (c *Conn) fail(reqs []driver.Request, out []driver.Outcome, msg string) {
	now := driver.Now()
	for i, r := range reqs {
		out[i] = driver.Outcome{Class: driver.Error, Op: c.d.wl.Index(c.d.wl.Op(r.Seq)), Done: now, Msg: msg}
	}
}

// readFor reads keys for Do: along the hot path when it runs the path,
// else through pgx.
func (c *Conn) readFor(ctx context.Context, keys []int64) error {
	if c.read1 == nil {
		return c.read(ctx, keys, nil)
	}
	c.rows = c.rows[:0]
	for range keys {
		c.rows = append(c.rows, nil)
	}
	switch c.d.cfg.Path {
	case Any:
		return c.readAnyFast(keys)
	case SQL:
		return c.readSQLFast(keys)
	}
	return c.readOneFast(keys)
}

// missing is a read that returned fewer rows than keys: a Miss.
type missing struct{ n, of int }

func (e *missing) Error() string { return fmt.Sprintf("%d of %d keys have no row", e.n, e.of) }

// checkFound makes a read in which a key of the dataset came back without
// a row a miss.
func (c *Conn) checkFound(keys []int64) error {
	n := 0
	for _, r := range c.rows[:len(keys)] {
		if r == nil {
			n++
		}
	}
	if n > 0 {
		return &missing{n: n, of: len(keys)}
	}
	return nil
}

// update runs the update statement for one key; it must change one row.
func (c *Conn) update(ctx context.Context, key int64) error {
	tag, err := c.pg.Exec(ctx, stmtUpdate, key)
	if err != nil {
		return err
	}
	if n := tag.RowsAffected(); n != 1 {
		return errUnexpected("update changed %d rows, want 1", n)
	}
	return nil
}

// Fetch reads keys (nil: a NULL key) along the driver's read path and
// returns one decoded row per key, in key order: a map[string]any, or nil
// for a missing row or a NULL key. Pre-flight checks compare paths with it.
func (c *Conn) Fetch(ctx context.Context, keys []*int64) ([]any, error) {
	if c.d.readSQL == "" {
		return nil, fmt.Errorf("pg: path %s with workload %s does not read", c.d.cfg.Label(), c.d.wl.Kind())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := opCtx(ctx, c.d.cfg.Timeout)
	defer cancel()
	ks := make([]int64, len(keys))
	nulls := make([]bool, len(keys))
	for i, k := range keys {
		if k == nil {
			nulls[i] = true
		} else {
			ks[i] = *k
		}
	}
	if err := c.read(ctx, ks, nulls); err != nil {
		return nil, err
	}
	return append([]any(nil), c.rows[:len(keys)]...), nil
}

// Closed reports whether the connection is closed (Close, or lost).
func (c *Conn) Closed() bool { return c.pg.IsClosed() }

// PID returns the server backend's process ID.
func (c *Conn) PID() uint32 { return c.pg.PgConn().PID() }

// Close closes the connection. When Do is running it aborts it by closing
// the socket; a later Close (the engine's, after Do returns) finishes the
// job. Close is idempotent.
func (c *Conn) Close() error {
	if !c.mu.TryLock() {
		if nc := c.pg.PgConn().Conn(); nc != nil {
			_ = nc.Close()
		}
		return nil
	}
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.pg.Close(ctx); err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("pg: close: %w", err)
	}
	return nil
}

// shortMsg is an error's message for counting: "SQLSTATE 42P01: relation
// \"x\" does not exist" for a server error, else the first line of the
// message, bounded.
func shortMsg(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return "SQLSTATE " + pgErr.Code + ": " + pgErr.Message
	}
	var long *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &long) {
		// pgconn's framing has read the length, not told the type.
		return fmt.Sprintf("backend message of %d bytes exceeds pg.max_message %d bytes", long.ActualBodyLen+4, long.MaxExpectedBodyLen+4)
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > 160 {
		msg = msg[:160] + "…"
	}
	return msg
}
