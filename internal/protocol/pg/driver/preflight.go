package pg

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/secret"
)

// Probes are the key batches every read path of a suite must answer alike:
// duplicates, a NULL key and a missing key; no keys; only NULL keys.
func Probes() [][]*int64 {
	k := func(v int64) *int64 { return &v }
	return [][]*int64{
		{k(42), k(7), k(42), nil, k(999999)},
		{},
		{nil, nil},
	}
}

// FormatKeys writes a probe batch as [42 7 42 null 999999].
func FormatKeys(keys []*int64) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		if k == nil {
			parts[i] = "null"
		} else {
			parts[i] = strconv.FormatInt(*k, 10)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Preflight checks, before any load, that the table of every config exists
// with an integer primary key and the workload's rows, that every config's
// statements prepare, and that every read path returns the same rows, in
// key order, for each of Probes(): nil for NULL and missing keys, a row at
// each position of a duplicated key, each row's primary key equal to its key.
// All configs connect to dsn (their own DSN fields are ignored). The error
// names the first differing path, batch and position.
func Preflight(ctx context.Context, dsn secret.DSN, paths []Config) error {
	if len(paths) == 0 {
		return nil
	}
	ctl, err := Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("pg preflight: %w", err)
	}
	defer ctl.Close(context.Background())
	var refLabel string
	var ref [][]any
	checked := make(map[string]bool)
	labels := make(map[string]bool)
	for i, cfg := range paths {
		cfg.DSN = dsn
		d, err := New(cfg)
		if err != nil {
			return fmt.Errorf("pg preflight: path %d (%s): %w", i+1, cfg.Label(), err)
		}
		cfg = d.Config()
		label := cfg.Label()
		if labels[label] {
			label = fmt.Sprintf("%s #%d", label, i+1)
		}
		labels[label] = true
		key := cfg.Table + "\x00" + cfg.PK + "\x00" + strconv.FormatInt(cfg.Workload.Rows, 10)
		if !checked[key] {
			if err := CheckTable(ctx, ctl, cfg.Table, cfg.PK, cfg.Workload.Rows); err != nil {
				return fmt.Errorf("pg preflight: %w", err)
			}
			checked[key] = true
		}
		got, err := probe(ctx, d)
		if err != nil {
			return fmt.Errorf("pg preflight: path %s: %w", label, err)
		}
		if got == nil {
			continue // writes only
		}
		if ref == nil {
			refLabel, ref = label, got
			continue
		}
		if err := compare(label, got, refLabel, ref); err != nil {
			return fmt.Errorf("pg preflight: %w", err)
		}
	}
	return nil
}

// probe opens a connection of d (preparing its statements) and fetches each
// probe batch; nil results for a driver that does not read.
func probe(ctx context.Context, d *Driver) ([][]any, error) {
	c, err := d.OpenConn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if d.readSQL == "" {
		return nil, nil
	}
	var out [][]any
	for _, keys := range Probes() {
		rows, err := c.Fetch(ctx, keys)
		if err != nil {
			return nil, fmt.Errorf("batch %s: %w", FormatKeys(keys), err)
		}
		for j, r := range rows {
			if r == nil {
				continue
			}
			obj, _ := r.(map[string]any)
			id, _ := obj[d.pkName].(float64)
			if keys[j] == nil || id != float64(*keys[j]) {
				return nil, fmt.Errorf("batch %s position %d: row has %s %s, want %s",
					FormatKeys(keys), j, d.pkName, show(obj[d.pkName]), FormatKeys(keys[j:j+1]))
			}
		}
		if err := c.checkHotPath(keys, rows); err != nil {
			return nil, fmt.Errorf("batch %s without its NULL keys: %w", FormatKeys(keys), err)
		}
		out = append(out, rows)
	}
	return out, nil
}

// checkHotPath reads keys without their NULLs along the load's hot path
// (the encoders and decoder Do and the event loop run) and compares its
// rows with Fetch's rows of the same keys.
func (c *Conn) checkHotPath(keys []*int64, fetched []any) error {
	if c.read1 == nil {
		return nil // Do runs the path through pgx, as Fetch does
	}
	var ks []int64
	var want []any
	for i, k := range keys {
		if k != nil {
			ks = append(ks, *k)
			want = append(want, fetched[i])
		}
	}
	if c.d.nparams() < len(ks) && c.d.cfg.Path == Any && c.d.cfg.Form != FormParam {
		return nil // a load request has at most k keys
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rows = append(c.rows[:0], make([]any, len(ks))...)
	c.dec.reset()
	var err error
	c.arm()
	switch c.d.cfg.Path {
	case Any:
		err = c.readAnyFast(ks)
	case SQL:
		err = c.readSQLFast(ks)
	default:
		err = c.readOneFast(ks)
	}
	if c.disarm() {
		return fmt.Errorf("hot path: no answer within pg.timeout %s", c.d.cfg.Timeout)
	}
	if err != nil {
		return fmt.Errorf("hot path: %w", err)
	}
	for j := range ks {
		if c.d.cfg.SkipDecode {
			// Rows are not decoded: each is there or not.
			if (c.rows[j] == nil) != (want[j] == nil) {
				return fmt.Errorf("hot path row at position %d is %s, Fetch's %s", j, show(c.rows[j]), show(want[j]))
			}
			continue
		}
		if !reflect.DeepEqual(c.rows[j], want[j]) {
			return fmt.Errorf("hot path row at position %d is %s, Fetch's %s", j, show(c.rows[j]), show(want[j]))
		}
	}
	return nil
}

// compare reports the first position where two paths' probe results differ.
func compare(label string, got [][]any, refLabel string, ref [][]any) error {
	for b, keys := range Probes() {
		for j := range keys {
			if !reflect.DeepEqual(got[b][j], ref[b][j]) {
				return fmt.Errorf("path %s differs from path %s in batch %s at position %d: %s, want %s",
					label, refLabel, FormatKeys(keys), j, show(got[b][j]), show(ref[b][j]))
			}
		}
	}
	return nil
}

// show renders a decoded row compactly for an error.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// checkTableTimeout bounds CheckTable's statements, a count of the whole
// table among them.
const checkTableTimeout = 2 * time.Minute

// CheckTable checks that table exists, that pk alone is its primary key and
// an integer column, and, when rows > 0, that it holds exactly the rows
// 1 … rows the workload reads.
func CheckTable(ctx context.Context, conn *pgx.Conn, table, pk string, rows int64) error {
	// Counting a large table's rows takes a while: a generous bound.
	ctx, cancel := opCtx(ctx, checkTableTimeout)
	defer cancel()
	tableID, err := pgclient.ParseIdent("pg.table", table)
	if err != nil {
		return err
	}
	pkID, err := pgclient.ParseIdent("pg.pk", pk)
	if err != nil {
		return err
	}
	var oid *uint32
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1)::oid", tableID.Sanitize()).Scan(&oid); err != nil {
		return fmt.Errorf("postgres: look up table %q: %w", table, err)
	}
	if oid == nil {
		return fmt.Errorf("postgres: table %q does not exist", table)
	}
	var cols, types []string
	err = conn.QueryRow(ctx, `SELECT coalesce(array_agg(a.attname::text ORDER BY k.n), '{}'),
			coalesce(array_agg(format_type(a.atttypid, a.atttypmod) ORDER BY k.n), '{}')
		FROM pg_index i
		CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
		WHERE i.indrelid = $1 AND i.indisprimary`, *oid).Scan(&cols, &types)
	if err != nil {
		return fmt.Errorf("postgres: read primary key of table %q: %w", table, err)
	}
	switch {
	case len(cols) == 0:
		return fmt.Errorf("postgres: table %q has no primary key; benchrig reads rows by primary key (ALTER TABLE %s ADD PRIMARY KEY (%s))",
			table, tableID.Sanitize(), pkID.Sanitize())
	case len(cols) != 1 || cols[0] != pkID[0]:
		return fmt.Errorf("postgres: primary key of table %q is (%s), not %q", table, strings.Join(cols, ", "), pk)
	case types[0] != "bigint" && types[0] != "integer" && types[0] != "smallint":
		return fmt.Errorf("postgres: primary key %q of table %q is %s; benchrig's keys are integers (bigint, integer or smallint)", pk, table, types[0])
	}
	if rows <= 0 {
		return nil
	}
	var n int64
	var lo, hi *int64
	q := "SELECT count(*), min(" + pkID.Sanitize() + ")::bigint, max(" + pkID.Sanitize() + ")::bigint FROM " + tableID.Sanitize()
	if err := conn.QueryRow(ctx, q).Scan(&n, &lo, &hi); err != nil {
		return fmt.Errorf("postgres: count rows of table %q: %w", table, err)
	}
	if n != rows || lo == nil || *lo != 1 || *hi != rows {
		span := "no ids"
		if lo != nil {
			span = fmt.Sprintf("ids %d…%d", *lo, *hi)
		}
		return fmt.Errorf("postgres: table %q has %d rows (%s), but the workload reads ids 1…%d (workload.rows %d)", table, n, span, rows, rows)
	}
	return nil
}
