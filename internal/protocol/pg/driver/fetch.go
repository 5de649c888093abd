package pg

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// read fills c.rows[:len(keys)] along the driver's path. nulls, when not
// nil, marks keys to send as NULL (pre-flight probes only).
func (c *Conn) read(ctx context.Context, keys []int64, nulls []bool) error {
	c.rows = c.rows[:0]
	for range keys {
		c.rows = append(c.rows, nil)
	}
	switch c.d.cfg.Path {
	case PreparedOne:
		if c.d.cfg.BatchMode == Pipeline {
			return c.readPipeline(ctx, keys, nulls)
		}
		return c.readRoundtrips(ctx, keys, nulls)
	case Any:
		return c.readAny(ctx, keys, nulls)
	case SQL:
		return c.readSQL(ctx, keys, nulls)
	}
	return errUnexpected("path %s does not read", c.d.cfg.Path)
}

// keyArg is key i as a statement argument.
func keyArg(keys []int64, nulls []bool, i int) any {
	if nulls != nil && nulls[i] {
		return nil
	}
	return keys[i]
}

// arrayArg is the key array as a statement argument.
func arrayArg(keys []int64, nulls []bool) any {
	if nulls == nil {
		return keys
	}
	ptrs := make([]*int64, len(keys))
	for i := range keys {
		if !nulls[i] {
			ptrs[i] = &keys[i]
		}
	}
	return ptrs
}

// readRoundtrips runs the one-key statement once per key.
func (c *Conn) readRoundtrips(ctx context.Context, keys []int64, nulls []bool) error {
	for i := range keys {
		rows, err := c.pg.Query(ctx, stmtRead, keyArg(keys, nulls, i))
		if err != nil {
			return err
		}
		if c.rows[i], err = c.oneRow(rows); err != nil {
			return err
		}
	}
	return nil
}

// readPipeline sends the one-key statement for every key in one batch.
func (c *Conn) readPipeline(ctx context.Context, keys []int64, nulls []bool) error {
	if len(keys) == 0 {
		return nil
	}
	c.batch.QueuedQueries = c.batch.QueuedQueries[:0]
	for i := range keys {
		c.batch.Queue(stmtRead, keyArg(keys, nulls, i))
	}
	br := c.pg.SendBatch(ctx, &c.batch)
	for i := range keys {
		rows, err := br.Query()
		if err != nil {
			br.Close()
			return err
		}
		if c.rows[i], err = c.oneRow(rows); err != nil {
			br.Close()
			return err
		}
	}
	return br.Close()
}

// oneRow reads the at most one JSON row of a one-key statement.
func (c *Conn) oneRow(rows pgx.Rows) (any, error) {
	defer rows.Close()
	var v any
	n := 0
	for rows.Next() {
		if n++; n > 1 {
			continue
		}
		raw := rows.RawValues()
		if len(raw) != 1 {
			return nil, errUnexpected("read statement returned %d columns, want 1", len(raw))
		}
		c.bytes += int64(len(raw[0]))
		var err error
		if v, err = decodeRow(raw[0], rows.FieldDescriptions()[0]); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if n > 1 {
		return nil, errUnexpected("%d rows for one key: is the key column unique?", n)
	}
	return v, nil
}

// readAny runs the any path's statement and puts each row back at every
// position of its key. The forms with k parameters run once per k keys,
// NULL past the last.
func (c *Conn) readAny(ctx context.Context, keys []int64, nulls []bool) error {
	clear(c.byKey)
	if n := c.d.nparams(); c.d.cfg.Form != FormParam {
		for lo := 0; lo == 0 || lo < len(keys); lo += n {
			args := make([]any, n)
			for i := range args {
				if lo+i < len(keys) {
					args[i] = keyArg(keys, nulls, lo+i)
				}
			}
			if err := c.anyRows(ctx, args); err != nil {
				return err
			}
		}
	} else if err := c.anyRows(ctx, []any{arrayArg(keys, nulls)}); err != nil {
		return err
	}
	for i, k := range keys {
		if nulls == nil || !nulls[i] {
			c.rows[i] = c.byKey[k]
		}
	}
	return nil
}

// anyRows runs the any path's statement once and adds its rows to c.byKey.
func (c *Conn) anyRows(ctx context.Context, args []any) error {
	rows, err := c.pg.Query(ctx, stmtRead, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		raw := rows.RawValues()
		fds := rows.FieldDescriptions()
		if len(raw) != 2 {
			return errUnexpected("read statement returned %d columns, want 2", len(raw))
		}
		pk, ok := intValue(raw[0], fds[0])
		if !ok {
			return errUnexpected("primary key is not an integer")
		}
		c.bytes += int64(len(raw[0]) + len(raw[1]))
		v, err := decodeRow(raw[1], fds[1])
		if err != nil {
			return err
		}
		c.byKey[pk] = v
	}
	return rows.Err()
}

// readSQL runs the user's statement and accepts any of the shapes
// documented on SQL.
func (c *Conn) readSQL(ctx context.Context, keys []int64, nulls []bool) error {
	rows, err := c.pg.Query(ctx, stmtRead, arrayArg(keys, nulls))
	if err != nil {
		return err
	}
	defer rows.Close()
	fds := rows.FieldDescriptions()
	if len(fds) != 1 {
		rows.Close()
		if err := rows.Err(); err != nil {
			return err // a failed statement describes no columns
		}
		return errUnexpected("sql path returned %d columns, want 1", len(fds))
	}
	isArray := arrayOIDs[fds[0].DataTypeOID]
	if !isArray && !jsonOIDs[fds[0].DataTypeOID] {
		return errUnexpected("sql path returned a column of type OID %d, want json, jsonb, text or an array of them", fds[0].DataTypeOID)
	}
	c.vals = c.vals[:0]
	n := 0
	for rows.Next() {
		n++
		raw := rows.RawValues()[0]
		c.bytes += int64(len(raw))
		if !isArray {
			v, err := decodeRow(raw, fds[0])
			if err != nil {
				return err
			}
			c.vals = append(c.vals, v)
			continue
		}
		var elems []*string
		if err := rows.Scan(&elems); err != nil {
			return errUnexpected("sql path array: %v", err)
		}
		for _, e := range elems {
			var v any
			if e != nil {
				if err := json.Unmarshal([]byte(*e), &v); err != nil {
					return errUnexpected("invalid JSON in a row")
				}
			}
			c.vals = append(c.vals, v)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	vals := c.vals
	fromJSONArray := false
	switch {
	case isArray && n != 1:
		return errUnexpected("sql path returned %d rows holding arrays, want 1", n)
	case !isArray && len(vals) == 1:
		// One row: a JSON array of rows, or the one key's row.
		if arr, ok := vals[0].([]any); ok {
			vals, fromJSONArray = arr, true
		} else if vals[0] == nil && len(keys) == 0 {
			vals = vals[:0] // array_agg over no rows is NULL
		}
	}
	if len(vals) != len(keys) {
		return errUnexpected("sql path returned %d rows for %d keys", len(vals), len(keys))
	}
	for i, v := range vals {
		if str, ok := v.(string); ok && fromJSONArray {
			// array_to_json(text[]): each row's JSON text as a string.
			v = nil
			if err := json.Unmarshal([]byte(str), &v); err != nil {
				return errUnexpected("invalid JSON in a row")
			}
		}
		if _, ok := v.(map[string]any); !ok && v != nil {
			return errUnexpected("sql path row is not a JSON object")
		}
		c.rows[i] = v
	}
	return nil
}

// JSON-carrying column types, and arrays of them.
var (
	jsonOIDs = map[uint32]bool{
		pgtype.JSONOID: true, pgtype.JSONBOID: true, pgtype.TextOID: true, pgtype.VarcharOID: true,
	}
	arrayOIDs = map[uint32]bool{
		pgtype.JSONArrayOID: true, pgtype.JSONBArrayOID: true, pgtype.TextArrayOID: true, pgtype.VarcharArrayOID: true,
	}
)

// decodeRow decodes one JSON value (nil for SQL NULL) into Go values:
// objects become map[string]any, numbers float64.
func decodeRow(raw []byte, fd pgconn.FieldDescription) (any, error) {
	if raw == nil {
		return nil, nil
	}
	if fd.DataTypeOID == pgtype.JSONBOID && fd.Format == pgtype.BinaryFormatCode {
		if len(raw) == 0 || raw[0] != 1 {
			return nil, errUnexpected("jsonb value in an unknown binary version")
		}
		raw = raw[1:]
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, errUnexpected("invalid JSON in a row")
	}
	return v, nil
}

// intValue reads an integer column in either format.
func intValue(raw []byte, fd pgconn.FieldDescription) (int64, bool) {
	if raw == nil {
		return 0, false
	}
	if fd.Format == pgtype.BinaryFormatCode {
		switch {
		case fd.DataTypeOID == pgtype.Int8OID && len(raw) == 8:
			return int64(binary.BigEndian.Uint64(raw)), true
		case fd.DataTypeOID == pgtype.Int4OID && len(raw) == 4:
			return int64(int32(binary.BigEndian.Uint32(raw))), true
		case fd.DataTypeOID == pgtype.Int2OID && len(raw) == 2:
			return int64(int16(binary.BigEndian.Uint16(raw))), true
		}
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}
