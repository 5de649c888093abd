package respserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/pgephemeral"
	"github.com/benchrig/benchrig/internal/protocol/pg/driver"
	respproto "github.com/benchrig/benchrig/internal/protocol/resp"
	wire "github.com/benchrig/benchrig/internal/resp"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
)

// redisFillChunk is how many SETs a fill pipelines per write. The MGETs of
// a pre-flight carry at most the probe batch's keys (ProbeBatch: no more
// than the suite's largest batch, at most suite.DefaultVerifyBatch unless
// verify_batch says otherwise): real servers limit request and reply sizes.
const redisFillChunk = 256

// RedisKey renders a key template for key number id: {db} becomes db, {id}
// the number; everything else is literal, as in the RESP driver.
func RedisKey(template, db string, id int64) string {
	if db != "" {
		template = strings.ReplaceAll(template, "{db}", db)
	}
	return strings.ReplaceAll(template, "{id}", strconv.FormatInt(id, 10))
}

// Fill is a cache-aside fill: it SETs each row's JSON under the key
// template ({id} is the row's id; resolve {db} first, see RedisKey),
// pipelining redisFillChunk SETs per round trip, and returns how many keys
// it stored. rows calls yield for each row until yield returns false.
func (s *RedisServer) Fill(ctx context.Context, rows Rows, keyTemplate string) (int, error) {
	if !strings.Contains(keyTemplate, "{id}") {
		return 0, fmt.Errorf("redis fill: key template %q has no {id}", keyTemplate)
	}
	if strings.Contains(keyTemplate, "{db}") {
		return 0, fmt.Errorf("redis fill: key template %q still has {db}; render it first", keyTemplate)
	}
	c, err := s.dial(ctx)
	if err != nil {
		return 0, err
	}
	defer c.close()
	var (
		stored, queued int
		lastKey        string
		longest        int
		werr           error
	)
	flush := func() bool {
		if queued == 0 {
			return true
		}
		c.extend(ctx)
		if werr = c.pipeline(queued, "OK"); werr != nil {
			werr = fmt.Errorf("redis fill: a pipeline of %d SETs near key %q (values up to %d bytes): %w%s",
				queued, lastKey, longest, s.redactErr(werr), sizeHint(werr, "the rows' size (payload_bytes)"))
			return false
		}
		longest = 0
		stored += queued
		queued = 0
		c.buf = c.buf[:0]
		return ctx.Err() == nil
	}
	c.buf = c.buf[:0]
	err = rows(func(id int64, row []byte) bool {
		lastKey = RedisKey(keyTemplate, "", id)
		c.buf = wire.AppendArrayHeader(c.buf, 3)
		c.buf = wire.AppendBulkString(c.buf, "SET")
		c.buf = wire.AppendBulkString(c.buf, lastKey)
		c.buf = wire.AppendBulk(c.buf, row)
		longest = max(longest, len(row))
		if queued++; queued == redisFillChunk {
			return flush()
		}
		return true
	})
	if werr == nil && err == nil {
		flush()
	}
	switch {
	case werr != nil:
		return stored, werr
	case err != nil:
		return stored, fmt.Errorf("redis fill: rows: %w", err)
	case ctx.Err() != nil:
		return stored, fmt.Errorf("redis fill: %w", ctx.Err())
	}
	return stored, nil
}

// MGet reads keys with MGET (at most suite.DefaultVerifyBatch per
// command) and returns their values in order, nil for a missing key.
func (s *RedisServer) MGet(ctx context.Context, keys []string) ([][]byte, error) {
	return s.MGetBatch(ctx, keys, 0)
}

// MGetBatch is MGet with at most batch keys per command (≤ 0:
// suite.DefaultVerifyBatch). A command the server refuses is named with
// its size in the error.
func (s *RedisServer) MGetBatch(ctx context.Context, keys []string, batch int) ([][]byte, error) {
	if batch <= 0 {
		batch = suite.DefaultVerifyBatch
	}
	c, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.close()
	out := make([][]byte, 0, len(keys))
	for len(keys) > 0 {
		n := min(len(keys), batch)
		c.extend(ctx)
		vals, err := c.mget(keys[:n])
		if err != nil {
			return nil, s.wrap(fmt.Sprintf("MGET of %d keys", n), err)
		}
		out = append(out, vals...)
		keys = keys[n:]
	}
	return out, nil
}

// sizeHint says how to make a refused command smaller, when err is the
// server's error reply (a limit on request or reply sizes); what names the
// knob.
func sizeHint(err error, what string) string {
	var se *wire.Error
	if !errors.As(err, &se) {
		return ""
	}
	return "; if the server limits request or reply sizes, lower " + what
}

// CheckRows reads the keys of ids with MGET (at most batch keys per
// command, ≤ 0: suite.DefaultVerifyBatch) and compares each value, decoded
// as JSON, with want(id) (decoded JSON, nil for a missing row). The error
// names the first key that differs and both values.
func (s *RedisServer) CheckRows(ctx context.Context, keyTemplate, db string, ids []int64, want func(i int) any) error {
	return s.checkRows(ctx, keyTemplate, db, ids, want, 0)
}

func (s *RedisServer) checkRows(ctx context.Context, keyTemplate, db string, ids []int64, want func(i int) any, batch int) error {
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = RedisKey(keyTemplate, db, id)
	}
	vals, err := s.MGetBatch(ctx, keys, batch)
	if err != nil {
		return err
	}
	for i, v := range vals {
		var got any
		if v != nil {
			if err := json.Unmarshal(v, &got); err != nil {
				return fmt.Errorf("key %q: the value is not JSON: %s", keys[i], showValue(v))
			}
		}
		if w := want(i); !reflect.DeepEqual(got, w) {
			return fmt.Errorf("key %q (id %d): redis has %s, the reference has %s", keys[i], ids[i], showJSON(got), showJSON(w))
		}
	}
	return nil
}

// Rows yields rows as (id, JSON text) until yield returns false; the
// argument of RedisServer.Fill.
type Rows func(yield func(id int64, rowJSON []byte) bool) error

// DemoRows yields ids 1 … n of the demo dataset as row_to_json would render
// them: {"id":N,"revision":0,"payload":"…"} with pgclient.Payload's
// payloadBytes of payload, so that a redis filled from them holds exactly
// what a fill from PostgreSQL's demo table would.
func DemoRows(n int64, payloadBytes int) Rows {
	return func(yield func(int64, []byte) bool) error {
		var b []byte
		for id := int64(1); id <= n; id++ {
			b = DemoRow(b[:0], id, payloadBytes)
			if !yield(id, b) {
				return nil
			}
		}
		return nil
	}
}

// DemoRow appends row id of the demo dataset as JSON to dst.
func DemoRow(dst []byte, id int64, payloadBytes int) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"revision":0,"payload":`...)
	dst = strconv.AppendQuote(dst, pgclient.Payload(id, payloadBytes)) // ASCII letters, digits and '-': JSON and Go quoting agree
	return append(dst, '}')
}

// PGRows yields the rows of table from PostgreSQL, ordered by its integer
// primary key pk, as row_to_json(t) text (what the pg driver's paths read);
// maxID > 0 stops at that key. The DSN's password never appears in errors.
func PGRows(ctx context.Context, dsn secret.DSN, table, pk string, maxID int64) Rows {
	return func(yield func(int64, []byte) bool) error {
		tid, err := pgclient.ParseIdent("table", table)
		if err != nil {
			return err
		}
		pid, err := pgclient.ParseIdent("pk", pk)
		if err != nil {
			return err
		}
		// Bounded: the connect and every message (pg.Connect), and the
		// read of the whole table, generously.
		ctx, cancel := context.WithTimeout(ctx, pgRowsTimeout)
		defer cancel()
		conn, err := pg.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		col := "t." + pid.Sanitize()
		q := "SELECT " + col + "::bigint, row_to_json(t)::text FROM " + tid.Sanitize() + " t"
		var args []any
		if maxID > 0 {
			q += " WHERE " + col + " <= $1"
			args = append(args, maxID)
		}
		rows, err := conn.Query(ctx, q+" ORDER BY "+col, args...)
		if err != nil {
			return fmt.Errorf("postgres: read table %s: %w", table, pgclient.ScrubDSN(err, dsn.Reveal()))
		}
		defer rows.Close()
		var (
			id  int64
			row []byte
		)
		for rows.Next() {
			if err := rows.Scan(&id, &row); err != nil {
				return fmt.Errorf("postgres: table %s: %w", table, err)
			}
			if !yield(id, row) {
				return nil
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("postgres: read table %s: %w", table, pgclient.ScrubDSN(err, dsn.Reveal()))
		}
		return nil
	}
}

// pgRowsTimeout bounds PGRows' read of a whole table.
const pgRowsTimeout = 30 * time.Minute

// FillFromPG copies table's rows from PostgreSQL into the server, each
// row_to_json(t) text under keyTemplate ({id}: the primary key pk), so that
// the pg driver's paths and RESP read identical rows. It returns the number
// of keys stored.
func (s *RedisServer) FillFromPG(ctx context.Context, dsn secret.DSN, table, pk, keyTemplate string) (int, error) {
	return s.Fill(ctx, PGRows(ctx, dsn, table, pk, 0), keyTemplate)
}

// Reference collects the rows with ids 1 … n into a lookup for the RESP
// driver's sampled validation (Config.Reference): the exact bytes a fill
// from rows stored.
func Reference(rows Rows, n int64) (func(id int64) ([]byte, bool), error) {
	m := make(map[int64][]byte, n)
	err := rows(func(id int64, row []byte) bool {
		if id >= 1 && id <= n {
			m[id] = append([]byte(nil), row...)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return func(id int64) ([]byte, bool) {
		v, ok := m[id]
		return v, ok
	}, nil
}

// VerifyAgainstPG is the pre-flight check of a cache: for each of ids (in
// MGETs, and PostgreSQL reads, of at most batch keys: ProbeBatch) the
// value under the key template, decoded as JSON, must equal the row
// PostgreSQL returns for the id along the pg driver's any path (nil: a key
// missing in both). The error names the first key that differs, with both
// values; a command the server refuses is named with its size and how to
// lower it.
func (s *RedisServer) VerifyAgainstPG(ctx context.Context, dsn secret.DSN, table, pk, keyTemplate, db string, ids []int64, batch int) error {
	if batch <= 0 {
		batch = suite.DefaultVerifyBatch
	}
	d, err := pg.New(pg.Config{DSN: dsn, Path: pg.Any, Table: table, PK: pk})
	if err != nil {
		return fmt.Errorf("verify against PostgreSQL: %w", err)
	}
	conn, err := d.OpenConn(ctx)
	if err != nil {
		return fmt.Errorf("verify against PostgreSQL: %w", err)
	}
	defer conn.Close()
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), batch)]
		ids = ids[len(chunk):]
		keys := make([]*int64, len(chunk))
		for i := range chunk {
			keys[i] = &chunk[i]
		}
		want, err := conn.Fetch(ctx, keys)
		if err != nil {
			return fmt.Errorf("verify against PostgreSQL: fetch %d rows: %w", len(keys), pgclient.ScrubDSN(err, dsn.Reveal()))
		}
		if err := s.checkRows(ctx, keyTemplate, db, chunk, func(i int) any { return want[i] }, batch); err != nil {
			return fmt.Errorf("verify against PostgreSQL: %w%s", err,
				sizeHint(err, fmt.Sprintf("the probe batch: verify_batch (now %d keys per MGET; --verify-batch) or the suite's largest batch", batch)))
		}
	}
	return nil
}

// ProbeBatch is the keys of one pre-flight MGET: no more than the largest
// batch of env's resp cells (the sizes the suite sends anyway), and at
// most verify_batch, suite.DefaultVerifyBatch when unset.
func ProbeBatch(env system.Env, verifyBatch int) int {
	limit := verifyBatch
	if limit <= 0 {
		limit = suite.DefaultVerifyBatch
	}
	largest := 0
	for _, c := range env.Cells {
		if c.Protocol == respproto.Key {
			largest = max(largest, c.Batch)
		}
	}
	if largest == 0 {
		return limit
	}
	return min(largest, limit)
}

// ProbeIDs are the ids a pre-flight verification reads: every key of the
// key space 1 … keySpace (at most the first 65,536), and two that a
// dataset of ids 1 … n rarely holds (0 and keySpace + 1,000,000), where a
// missing row must be a missing key.
func ProbeIDs(keySpace int64) []int64 {
	n := min(keySpace, 1<<16)
	ids := make([]int64, 0, n+2)
	for id := int64(1); id <= n; id++ {
		ids = append(ids, id)
	}
	return append(ids, 0, keySpace+1_000_000)
}

func showJSON(v any) string {
	if v == nil {
		return "nil (no row)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return showValue(b)
}

func showValue(b []byte) string {
	if len(b) > 160 {
		return string(b[:160]) + "…"
	}
	return string(b)
}

// StartFillSource starts a throwaway PostgreSQL with the demo table to
// fill from (its key column is id).
func StartFillSource(ctx context.Context, table, pk string, rows int64) (*pgephemeral.Server, error) {
	if pk != "id" {
		return nil, fmt.Errorf("redis.fill_from_pg: the ephemeral server's demo table %s has the key id, not %q", table, pk)
	}
	eph, err := pgephemeral.StartEphemeral(ctx, pgephemeral.Options{MaxConnections: pgephemeral.MaxConnectionsFor(1)})
	if err != nil {
		return nil, fmt.Errorf("start the ephemeral PostgreSQL to fill from: %w", err)
	}
	conn, err := pgclient.Connect(ctx, eph.DSN())
	if err == nil {
		err = pgclient.CreateDataset(ctx, conn, pgclient.Dataset{Table: table, Rows: rows})
		conn.Close(context.Background())
	}
	if err != nil {
		_ = eph.Stop(context.Background())
		return nil, fmt.Errorf("prepare the ephemeral PostgreSQL: %w", err)
	}
	return eph, nil
}
