package pg

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// The load's hot path (Do) runs the prepared statements through pgconn
// directly, as pgx would but without its per-call work: the key parameter
// is encoded in binary into a reused buffer, the rows are decoded by a
// rowDecoder, and no context is watched. The wire traffic is the same as
// pgx's (Bind with binary parameters, Execute, Sync; integer columns in
// binary, the rest in text), so the server does the same work.
//
// The per-request timeout is a timer per connection, reset for each
// request, instead of a context per request (an allocation, a timer and a
// goroutine hand-off each). When it fires it does what pgx does on a
// context deadline: a cancel request to the server, and if the statement
// is still running DeadlineDelay later, a socket deadline that ends the
// read (and the connection). Cancellation of the run is the engine's
// Close, which aborts a Do in progress.

// stmt is a prepared statement as the hot path runs it.
type stmt struct {
	sd        *pgconn.StatementDescription
	paramOID  uint32  // the first parameter's type
	intParams bool    // every parameter is an integer
	resultFmt []int16 // per column: binary for integers and arrays, text otherwise
}

// newStmt describes a prepared statement for the hot path.
func newStmt(sd *pgconn.StatementDescription) *stmt {
	s := &stmt{sd: sd, paramOID: sd.ParamOIDs[0], intParams: true, resultFmt: make([]int16, len(sd.Fields))}
	for _, oid := range sd.ParamOIDs {
		if intSize(oid) == 0 {
			s.intParams = false
		}
	}
	for i, f := range sd.Fields {
		switch {
		case intSize(f.DataTypeOID) > 0, arrayOIDs[f.DataTypeOID]:
			// An array in binary is its elements' lengths and bytes:
			// nothing to unquote (sqlshape.go).
			s.resultFmt[i] = pgtype.BinaryFormatCode
		default:
			s.resultFmt[i] = pgtype.TextFormatCode
		}
	}
	return s
}

// binaryFormat is the format code list of one binary parameter.
var binaryFormat = []int16{pgtype.BinaryFormatCode}

// intSize is the binary size of an integer type (0: not an integer).
func intSize(oid uint32) int {
	switch oid {
	case pgtype.Int8OID:
		return 8
	case pgtype.Int4OID:
		return 4
	case pgtype.Int2OID:
		return 2
	}
	return 0
}

// elemOf is the element type of an integer array type (0: not one).
func elemOf(oid uint32) uint32 {
	switch oid {
	case pgtype.Int8ArrayOID:
		return pgtype.Int8OID
	case pgtype.Int4ArrayOID:
		return pgtype.Int4OID
	case pgtype.Int2ArrayOID:
		return pgtype.Int2OID
	}
	return 0
}

// fastKey reports whether s takes integer keys (one, or one per
// parameter) the hot path encodes.
func (s *stmt) fastKey() bool { return s != nil && s.intParams }

// fastArray reports whether s takes one integer array the hot path
// encodes.
func (s *stmt) fastArray() bool {
	return s != nil && len(s.sd.ParamOIDs) == 1 && elemOf(s.paramOID) != 0
}

// appendInt appends k in the binary format of the integer type oid.
func appendInt(b []byte, oid uint32, k int64) ([]byte, error) {
	switch intSize(oid) {
	case 8:
		return binary.BigEndian.AppendUint64(b, uint64(k)), nil
	case 4:
		if k < math.MinInt32 || k > math.MaxInt32 {
			return b, errUnexpected("key %d does not fit an integer parameter", k)
		}
		return binary.BigEndian.AppendUint32(b, uint32(int32(k))), nil
	case 2:
		if k < math.MinInt16 || k > math.MaxInt16 {
			return b, errUnexpected("key %d does not fit a smallint parameter", k)
		}
		return binary.BigEndian.AppendUint16(b, uint16(int16(k))), nil
	}
	return b, fmt.Errorf("pg: parameter type OID %d is not an integer", oid)
}

// encodeKey sets c.params to the one key.
func (c *Conn) encodeKey(s *stmt, k int64) error {
	b, err := appendInt(c.pbuf[:0], s.paramOID, k)
	c.pbuf = b
	c.params = append(c.params[:0], b)
	return err
}

// encodeKeys sets c.params to one key per parameter of s, NULL for the
// parameters past the last key (a NULL matches no row). More keys than
// parameters is an error.
func (c *Conn) encodeKeys(s *stmt, keys []int64) error {
	oids := s.sd.ParamOIDs
	if len(keys) > len(oids) {
		return errUnexpected("%d keys for a statement of %d parameters", len(keys), len(oids))
	}
	b := c.pbuf[:0]
	for i, k := range keys {
		var err error
		if b, err = appendInt(b, oids[i], k); err != nil {
			c.pbuf = b
			return err
		}
	}
	c.pbuf = b
	// Sliced after the appends: b may have moved.
	c.params = c.params[:0]
	off := 0
	for i := range oids {
		if i >= len(keys) {
			c.params = append(c.params, nil)
			continue
		}
		n := intSize(oids[i])
		c.params = append(c.params, b[off:off+n:off+n])
		off += n
	}
	return nil
}

// encodeRead encodes keys for the read statement of the driver's path.
func (c *Conn) encodeRead(keys []int64) error {
	if c.arrayParam() {
		return c.encodeArray(c.read1, keys)
	}
	return c.encodeKeys(c.read1, keys)
}

// arrayParam reports whether the read statement of the any or sql path
// takes the keys as one array parameter (else one parameter per key).
func (c *Conn) arrayParam() bool {
	return c.d.nparams() == 1 && (c.d.cfg.Path != Any || c.d.cfg.Form == FormParam)
}

// encodeArray sets c.params to the keys as a one-dimensional array in
// PostgreSQL's binary array format.
func (c *Conn) encodeArray(s *stmt, keys []int64) error {
	elem := elemOf(s.paramOID)
	size := intSize(elem)
	b := c.pbuf[:0]
	b = binary.BigEndian.AppendUint32(b, 1) // dimensions
	b = binary.BigEndian.AppendUint32(b, 0) // no NULLs
	b = binary.BigEndian.AppendUint32(b, elem)
	b = binary.BigEndian.AppendUint32(b, uint32(len(keys)))
	b = binary.BigEndian.AppendUint32(b, 1) // lower bound
	if len(keys) == 0 {
		b = b[:12] // an empty array has no dimension
		binary.BigEndian.PutUint32(b, 0)
	}
	var err error
	for _, k := range keys {
		b = binary.BigEndian.AppendUint32(b, uint32(size))
		if b, err = appendInt(b, elem, k); err != nil {
			break
		}
	}
	c.pbuf = b
	c.params = append(c.params[:0], b)
	return err
}

// exec starts a prepared statement with c.params.
func (c *Conn) exec(s *stmt) *pgconn.ResultReader {
	return c.pg.PgConn().ExecStatement(context.Background(), s.sd, c.params, binaryFormat, s.resultFmt)
}

// readOneFast reads each key with the one-key statement, one round trip
// each.
func (c *Conn) readOneFast(keys []int64) error {
	s := c.read1
	for i, k := range keys {
		if err := c.encodeKey(s, k); err != nil {
			return err
		}
		rr := c.exec(s)
		n := 0
		var err error
		for rr.NextRow() {
			if n++; n > 1 || err != nil {
				continue
			}
			vals := rr.Values()
			if len(vals) != 1 {
				err = errUnexpected("read statement returned %d columns, want 1", len(vals))
				continue
			}
			c.bytes += int64(len(vals[0]))
			c.rows[i], err = c.decodeFast(vals[0], i)
		}
		if _, cerr := rr.Close(); cerr != nil {
			return cerr
		}
		if err != nil {
			return err
		}
		if n > 1 {
			return errUnexpected("%d rows for one key: is the key column unique?", n)
		}
	}
	return nil
}

// readAnyFast runs the any path's statement and puts each row back at every
// position of its key.
func (c *Conn) readAnyFast(keys []int64) error {
	s := c.read1
	if err := c.encodeRead(keys); err != nil {
		return err
	}
	rr := c.exec(s)
	c.idx.build(keys)
	var err error
	j := 0
	for rr.NextRow() {
		if err != nil {
			continue
		}
		vals := rr.Values()
		fds := rr.FieldDescriptions()
		if len(vals) != 2 || len(fds) != 2 {
			err = errUnexpected("read statement returned %d columns, want 2", len(vals))
			continue
		}
		pk, ok := intValue(vals[0], fds[0])
		if !ok {
			err = errUnexpected("primary key is not an integer")
			continue
		}
		c.bytes += int64(len(vals[0]) + len(vals[1]))
		var v any
		if v, err = c.decodeFast(vals[1], j); err == nil {
			c.idx.place(c.rows, pk, v)
			j++
		}
	}
	if _, cerr := rr.Close(); cerr != nil {
		return cerr
	}
	return err
}

// updateFast runs the update statement for one key; it must change one
// row.
func (c *Conn) updateFast(key int64) error {
	if err := c.encodeKey(c.upd, key); err != nil {
		return err
	}
	tag, err := c.exec(c.upd).Close()
	if err != nil {
		return err
	}
	if n := tag.RowsAffected(); n != 1 {
		return errUnexpected("update changed %d rows, want 1", n)
	}
	return nil
}

// decodeFast decodes row slot i's JSON (nil for SQL NULL), reusing the
// slot's map from the previous request; with SkipDecode, a row is
// Undecoded instead.
func (c *Conn) decodeFast(raw []byte, i int) (any, error) {
	if raw == nil {
		return nil, nil
	}
	if c.d.cfg.SkipDecode {
		return Undecoded, nil
	}
	return c.dec.decode(raw, c.slot(i))
}

// Undecoded stands for a row read but not decoded (Config.SkipDecode).
var Undecoded any = undecoded{}

type undecoded struct{}

// arm starts the request timeout.
func (c *Conn) arm() {
	if c.d.cfg.Timeout > 0 {
		c.timer.Reset(c.d.cfg.Timeout)
	}
}

// disarm stops the request timeout and reports whether it fired; if it did,
// it waits until the cancellation it started is over and clears the socket
// deadline it may have set.
func (c *Conn) disarm() bool {
	if c.d.cfg.Timeout <= 0 || c.timer.Stop() {
		return false
	}
	c.reqDone <- struct{}{}
	<-c.cancelDone
	if nc := c.pg.PgConn().Conn(); nc != nil {
		_ = nc.SetDeadline(time.Time{})
	}
	return true
}

// onTimeout runs on the timer's goroutine: a cancel request, then, if the
// request has not ended DeadlineDelay later, a deadline that ends the read.
func (c *Conn) onTimeout() {
	ctx, cancel := context.WithTimeout(context.Background(), cancelDeadline)
	_ = c.pg.PgConn().CancelRequest(ctx)
	left, _ := ctx.Deadline()
	cancel()
	t := time.NewTimer(time.Until(left))
	select {
	case <-c.reqDone:
	case <-t.C:
		if nc := c.pg.PgConn().Conn(); nc != nil {
			_ = nc.SetDeadline(time.Now())
		}
		<-c.reqDone
	}
	t.Stop()
	c.cancelDone <- struct{}{}
}
