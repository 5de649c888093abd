package pg

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/workload"
)

// Prepared statement names, one set per connection.
const (
	stmtRead   = "benchrig_read"
	stmtUpdate = "benchrig_update"
)

// cancelDeadline is how long after a timeout the socket is given up on
// when the server does not answer the cancel request.
const cancelDeadline = 2 * time.Second

// Backends is implemented by the event loops OpenLoop returns, for whoever
// reads the server's statistics around a window: a backend publishes its
// counters at the end of a transaction at most once a second, so a reader
// that wants exact deltas makes each backend run one more operation after a
// second has passed (Touch), or waits until the backends have exited.
// None of these may be called while the loop's Run is in progress.
type Backends interface {
	// LastDone is driver.Now() when the loop's last request ended (0: none).
	LastDone() int64
	// PIDs are the server process IDs of the loop's connections, the
	// backend each had last, also after the loop was closed.
	PIDs() []uint32
	// Touch performs one operation (seq 0 of the workload) on each open
	// connection, one connection after the other, and returns when all
	// are answered; their outcomes are not reported anywhere. One at a
	// time, because backends that end transactions at the same moment
	// contend for the shared statistics entries, and one that finds an
	// entry locked keeps its counters pending for another second.
	Touch(ctx context.Context) error
	// PlanStats reads pg_prepared_statements on each open connection,
	// one simple query after the other, and returns the plan counts
	// since each connection's previous reading (or its opening), summed.
	PlanStats(ctx context.Context) (Plans, error)
}

// Driver opens pgx connections that read and write the dataset along one
// access path. It is safe for concurrent use.
type Driver struct {
	cfg       Config
	conn      *pgx.ConnConfig
	wl        *workload.Workload
	pkName    string // the primary key's name as row_to_json spells it
	readSQL   string // "" when the workload never reads
	updateSQL string // "" when the workload never writes
}

var (
	_ driver.Driver = (*Driver)(nil)
	_ driver.Conn   = (*Conn)(nil)
)

// unusedCache is the capacity the load's connections give pgx's
// statement and description caches, which they do not use (New).
const unusedCache = 8

// New validates cfg (after defaults) and parses its DSN. It does not
// contact the server: Open and Preflight do.
func New(cfg Config) (*Driver, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	wl, err := workload.New(cfg.Workload)
	if err != nil {
		return nil, fmt.Errorf("pg.%w", err)
	}
	cc, err := pgclient.ParseDSN(cfg.DSN.Reveal())
	if err != nil {
		return nil, fmt.Errorf("pg.dsn: %w", err)
	}
	if cfg.PlanCacheMode != "" {
		// In the startup packet: in effect for every statement, no round
		// trip of its own.
		cc.RuntimeParams["plan_cache_mode"] = string(cfg.PlanCacheMode)
	}
	// A timed-out statement is cancelled on the server and the connection
	// kept; the socket is abandoned only if the server does not answer.
	cc.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: cancelDeadline}
	}
	// The connect is bounded in time, and every message from the answer
	// to the startup message on in size (connect.go).
	Bound(cc, cfg.MaxMessage)
	// The load's connections run the statements they prepare by name (and
	// simple-protocol readings): pgx's statement and description caches go
	// unused, yet at their default 512 entries each connection allocated
	// and cleared two maps for them: without them the whole CPU of
	// `benchrig pg -c 64 -n 64` fell from 0.33 to 0.30 s (medians of 11
	// interleaved runs, twice, 2026-12-06).
	cc.StatementCacheCapacity = min(cc.StatementCacheCapacity, unusedCache)
	cc.DescriptionCacheCapacity = min(cc.DescriptionCacheCapacity, unusedCache)
	tableID, _ := pgclient.ParseIdent("pg.table", cfg.Table)
	pkID, _ := pgclient.ParseIdent("pg.pk", cfg.PK)
	table, pk := tableID.Sanitize(), pkID.Sanitize()
	d := &Driver{cfg: cfg, conn: cc, wl: wl, pkName: pkID[0]}
	if wl.Kind() != workload.Writes {
		switch cfg.Path {
		case PreparedOne:
			d.readSQL = "SELECT row_to_json(t) FROM " + table + " t WHERE t." + pk + " = $1"
		case Any:
			d.readSQL = "SELECT t." + pk + ", row_to_json(t) FROM " + table + " t WHERE " + anyWhere(cfg.Form, "t."+pk, wl.Batch())
		case SQL:
			d.readSQL = cfg.SQL
		}
	}
	if wl.Kind() == workload.Writes || wl.Kind() == workload.Mixed {
		d.updateSQL = cfg.UpdateSQL
		if d.updateSQL == "" {
			d.updateSQL = "UPDATE " + table + " SET revision = revision + 1 WHERE " + pk + " = $1"
		}
	}
	return d, nil
}

// anyWhere is the any path's condition on col for k keys in form f.
func anyWhere(f Form, col string, k int) string {
	if f == FormParam {
		return col + " = ANY($1::bigint[])"
	}
	var b strings.Builder
	if f == FormIn {
		b.WriteString(col + " IN (")
	} else {
		b.WriteString(col + " = ANY(ARRAY[")
	}
	for i := 1; i <= k; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		b.WriteString("$" + strconv.Itoa(i))
	}
	if f == FormIn {
		b.WriteString(")")
	} else {
		// The cast types the parameters, as pgbench scripts write it.
		b.WriteString("]::bigint[])")
	}
	return b.String()
}

// nparams is the number of parameters of the read statement: k for the
// any path's forms with k parameters, else 1.
func (d *Driver) nparams() int {
	if d.cfg.Path == Any && d.cfg.Form != FormParam {
		return d.wl.Batch()
	}
	return 1
}

// Addr is the server's "host:port" as the DSN names it (the first host
// of a list); a Unix socket's host is its directory, which starts with
// "/".
func (d *Driver) Addr() string {
	return net.JoinHostPort(d.conn.Host, strconv.Itoa(int(d.conn.Port)))
}

// Config returns the resolved configuration (its String and JSON are
// redacted).
func (d *Driver) Config() Config { return d.cfg }

// Workload returns the driver's workload.
func (d *Driver) Workload() *workload.Workload { return d.wl }

// ReadSQL returns the statement the read path prepares ("" for writes only),
// for provenance and Explain.
func (d *Driver) ReadSQL() string { return d.readSQL }

// ReadArgs returns the read statement's arguments for keys, as the hot
// path binds them, for Explain: the first key (prepared-one), the key
// array (any, sql), or one key per parameter with NULL past the last
// (any[array], any[in]; keys beyond k are left out).
func (d *Driver) ReadArgs(keys []int64) []any {
	switch {
	case d.cfg.Path == PreparedOne:
		if len(keys) == 0 {
			return []any{nil}
		}
		return []any{keys[0]}
	case d.cfg.Path == Any && d.cfg.Form != FormParam:
		args := make([]any, d.nparams())
		for i := range args {
			if i < len(keys) {
				args[i] = keys[i]
			}
		}
		return args
	}
	return []any{keys}
}

// UpdateSQL returns the write statement ("" when the workload never writes).
func (d *Driver) UpdateSQL() string { return d.updateSQL }

// Name returns "pg".
func (d *Driver) Name() string { return "pg" }

// Ops returns the workload's operation classes: ["read"], ["write"] or
// ["read", "write"].
func (d *Driver) Ops() []string { return d.wl.Ops() }

// MaxPipeline returns 1: the batch of keys is the request; requests are not
// pipelined.
func (d *Driver) MaxPipeline() int { return 1 }

// Open opens one connection and prepares its statements.
func (d *Driver) Open(ctx context.Context, worker int) (driver.Conn, error) {
	c, err := d.OpenConn(ctx)
	if err != nil {
		return nil, fmt.Errorf("pg: worker %d: %w", worker, err)
	}
	return c, nil
}

// OpenConn is Open returning the concrete connection, whose Fetch
// pre-flight checks use. The connect is bounded by ConnectTimeout (or the
// DSN's connect_timeout), each statement's preparation by pg.timeout, and
// every message by pg.max_message.
func (d *Driver) OpenConn(ctx context.Context) (*Conn, error) {
	pc, err := connectConfig(ctx, d.conn, d.cfg.DSN, "pg.max_message")
	if err != nil {
		return nil, err
	}
	c := &Conn{d: d, pg: pc, keys: make([]int64, 0, d.wl.Batch()), byKey: make(map[int64]any),
		reqDone: make(chan struct{}, 1), cancelDone: make(chan struct{}, 1)}
	param := "$1: the key"
	switch {
	case d.nparams() > 1:
		param = "$1 … $k: the keys"
	case d.cfg.Path == Any && d.cfg.Form != FormParam:
	case d.cfg.Path == Any || d.cfg.Path == SQL:
		param = "$1: the key array"
	}
	read, err := c.prepare(ctx, stmtRead, d.readSQL, "read ("+d.cfg.Label()+" path)", param, d.nparams())
	if err != nil {
		pc.Close(context.Background())
		return nil, err
	}
	upd, err := c.prepare(ctx, stmtUpdate, d.updateSQL, "update", "$1: the key", 1)
	if err != nil {
		pc.Close(context.Background())
		return nil, err
	}
	// The hot path takes the statements whose parameters it encodes.
	switch {
	case d.cfg.Path == PreparedOne && d.cfg.BatchMode != Pipeline && read.fastKey():
		c.read1 = read
	case d.cfg.Path == Any && d.cfg.Form == FormParam && read.fastArray():
		c.read1 = read
	case d.cfg.Path == Any && d.cfg.Form != FormParam && read.fastKey():
		c.read1 = read
	case d.cfg.Path == SQL && read.fastArray():
		c.read1 = read
	}
	if upd.fastKey() {
		c.upd = upd
	}
	if c.read1 != nil {
		c.growSlots(min(d.wl.Batch(), eagerSlots))
	}
	c.timer = time.AfterFunc(time.Hour, c.onTimeout)
	c.timer.Stop()
	return c, nil
}

// prepare prepares one statement taking exactly n parameters.
func (c *Conn) prepare(ctx context.Context, name, sql, what, param string, n int) (*stmt, error) {
	if sql == "" {
		return nil, nil
	}
	ctx, cancel := opCtx(ctx, c.d.cfg.Timeout)
	defer cancel()
	sd, err := c.pg.Prepare(ctx, name, sql)
	if err != nil {
		return nil, fmt.Errorf("pg: prepare %s statement %q: %w", what, sql, err)
	}
	if len(sd.ParamOIDs) != n {
		want := "exactly one"
		if n != 1 {
			want = strconv.Itoa(n)
		}
		return nil, fmt.Errorf("pg: %s statement %q takes %d parameters; it must take %s (%s)",
			what, sql, len(sd.ParamOIDs), want, param)
	}
	return newStmt(sd), nil
}
