package pg

import (
	"encoding/binary"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// The sql path's result shapes, decoded on the hot paths (Do and the event
// loop) as they arrive, one DataRow at a time, into the connection's row
// slots with the one-pass decoder. What a batched SQL function returns:
//
//   - one row holding a SQL array (text[], varchar[], json[], jsonb[]) of
//     JSON texts, one element per key, NULL for a missing row; the hot
//     paths ask for it in binary, so the elements need no unquoting;
//   - one row holding a JSON array (a json, jsonb or text column) whose
//     elements are the rows: objects, null, or JSON strings that hold a
//     row's JSON text, as array_to_json(text[]) gives;
//   - one row per key with a JSON object (or NULL) each.
//
// A row value starting with '[' is the JSON array shape (a row itself is
// an object or null), so the shape is known from the first row.

// sqlStart resets the sql path's per-request state.
func (c *Conn) sqlStart() { c.sqlN, c.sqlPlaced, c.sqlArrays = 0, 0, 0 }

// sqlRow decodes one DataRow's single value of the sql path's statement,
// whose column is fd, placing rows from slot c.sqlPlaced on (at most
// nkeys of them; the rest are counted).
func (c *Conn) sqlRow(raw []byte, fd *pgconn.FieldDescription, format int16, nkeys int) error {
	c.sqlN++
	c.bytes += int64(len(raw))
	if arrayOIDs[fd.DataTypeOID] {
		c.sqlArrays++
		if format != pgtype.BinaryFormatCode {
			return errUnexpected("sql path array column in text format")
		}
		return c.sqlBinaryArray(raw, nkeys)
	}
	if !jsonOIDs[fd.DataTypeOID] {
		return errUnexpected("sql path returned a column of type OID %d, want json, jsonb, text or an array of them", fd.DataTypeOID)
	}
	if raw == nil {
		c.place(nil, nkeys)
		return nil
	}
	if fd.DataTypeOID == pgtype.JSONBOID && format == pgtype.BinaryFormatCode {
		if len(raw) == 0 || raw[0] != 1 {
			return errUnexpected("jsonb value in an unknown binary version")
		}
		raw = raw[1:]
	}
	p := jsonParser{d: &c.dec, s: raw}
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '[' {
		c.sqlArrays++
		return c.sqlJSONArray(&p, nkeys)
	}
	v, err := p.value(c.slot(c.sqlPlaced), 0)
	if err != nil {
		return err
	}
	if p.skipSpace(); p.i != len(p.s) {
		return errJSON
	}
	return c.placeRow(v, nkeys)
}

// sqlEnd checks the request's rows once the statement is complete.
func (c *Conn) sqlEnd(nkeys int) error {
	switch {
	case c.sqlArrays > 0 && c.sqlN != 1:
		return errUnexpected("sql path returned %d rows holding arrays, want 1", c.sqlN)
	case c.sqlN == 1 && c.sqlPlaced == 1 && nkeys == 0 && c.nullRow:
		return nil // array_agg over no rows is NULL
	case c.sqlPlaced != nkeys:
		return errUnexpected("sql path returned %d rows for %d keys", c.sqlPlaced, nkeys)
	}
	return nil
}

// slot is row slot i. Once a row is wider than any before, every slot
// gets cells for its width: a slot first used later (a request returning
// more rows than any before) allocates nothing then.
func (c *Conn) slot(i int) *rowSlot {
	if c.dec.width > c.slotWidth {
		c.slotWidth = c.dec.width
		for _, s := range c.slots {
			s.grow(c.slotWidth)
		}
	}
	if len(c.slots) <= i {
		c.growSlots(i + 1)
	}
	return c.slots[i]
}

// eagerSlots bounds the row slots made when a connection opens.
const eagerSlots = 1024

// growSlots makes row slots up to n (newRowSlot), so that a request
// returning more rows than any before allocates nothing either.
func (c *Conn) growSlots(n int) {
	for len(c.slots) < n {
		c.slots = append(c.slots, newRowSlot(c.slotWidth))
	}
}

// place puts the next row (nil: missing) at c.sqlPlaced when it is a
// key's position; c.nullRow says whether the last one was nil.
func (c *Conn) place(v any, nkeys int) {
	if c.sqlPlaced < nkeys {
		c.rows[c.sqlPlaced] = v
	}
	c.nullRow = v == nil
	c.sqlPlaced++
}

// placeRow places v, which must be a JSON object or null.
func (c *Conn) placeRow(v any, nkeys int) error {
	if _, ok := v.(map[string]any); !ok && v != nil {
		return errUnexpected("sql path row is not a JSON object")
	}
	c.place(v, nkeys)
	return nil
}

// sqlJSONArray decodes a JSON array of rows (p at its '[').
func (c *Conn) sqlJSONArray(p *jsonParser, nkeys int) error {
	p.i++
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
	} else {
		for {
			p.skipSpace()
			if err := c.sqlElem(p, nkeys); err != nil {
				return err
			}
			p.skipSpace()
			if p.i >= len(p.s) {
				return errJSON
			}
			if p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.s[p.i] != ']' {
				return errJSON
			}
			p.i++
			break
		}
	}
	if p.skipSpace(); p.i != len(p.s) {
		return errJSON
	}
	return nil
}

// sqlElem decodes one element of a JSON array of rows: an object, null, or
// a string holding a row's JSON text.
func (c *Conn) sqlElem(p *jsonParser, nkeys int) error {
	if p.i >= len(p.s) {
		return errJSON
	}
	switch p.s[p.i] {
	case '{':
		v, err := p.row(c.slot(c.sqlPlaced), 1)
		if err != nil {
			return err
		}
		c.place(v, nkeys)
		return nil
	case '"':
		b, err := p.str()
		if err != nil {
			return err
		}
		// b may be the decoder's unescaping scratch, which decoding
		// the row's own strings reuses: the row's text gets its own.
		c.dec.sbuf = append(c.dec.sbuf[:0], b...)
		return c.decodeText(c.dec.sbuf, nkeys)
	}
	v, err := p.value(nil, 1)
	if err != nil {
		return err
	}
	return c.placeRow(v, nkeys)
}

// decodeText decodes one row's JSON text (an element of a SQL array, or of
// a JSON array of strings) and places it.
func (c *Conn) decodeText(b []byte, nkeys int) error {
	v, err := c.dec.decode(b, c.slot(c.sqlPlaced))
	if err != nil {
		return err
	}
	return c.placeRow(v, nkeys)
}

// sqlBinaryArray decodes a one-dimensional SQL array in binary format
// whose elements are JSON texts (jsonb: a version byte, then the text).
func (c *Conn) sqlBinaryArray(raw []byte, nkeys int) error {
	if raw == nil {
		c.place(nil, nkeys) // a NULL array: no rows, or one missing row
		return nil
	}
	if len(raw) < 12 {
		return errUnexpected("sql path array: %d bytes, too short", len(raw))
	}
	ndim := binary.BigEndian.Uint32(raw)
	elem := binary.BigEndian.Uint32(raw[8:])
	if ndim == 0 {
		return nil
	}
	if ndim != 1 || len(raw) < 20 {
		return errUnexpected("sql path array of %d dimensions, want 1", ndim)
	}
	n := int(int32(binary.BigEndian.Uint32(raw[12:])))
	p := 20
	for i := 0; i < n; i++ {
		if len(raw)-p < 4 {
			return errUnexpected("sql path array: truncated element %d", i)
		}
		m := int(int32(binary.BigEndian.Uint32(raw[p:])))
		p += 4
		if m < 0 {
			c.place(nil, nkeys)
			continue
		}
		if len(raw)-p < m {
			return errUnexpected("sql path array: truncated element %d", i)
		}
		e := raw[p : p+m]
		p += m
		if elem == pgtype.JSONBOID {
			if len(e) == 0 || e[0] != 1 {
				return errUnexpected("jsonb value in an unknown binary version")
			}
			e = e[1:]
		}
		if err := c.decodeText(e, nkeys); err != nil {
			return err
		}
	}
	return nil
}

// readSQLFast runs the sql path's statement through pgconn with the key
// array encoded in binary, decoding as the event loop does.
func (c *Conn) readSQLFast(keys []int64) error {
	s := c.read1
	if err := c.encodeArray(s, keys); err != nil {
		return err
	}
	rr := c.exec(s)
	c.sqlStart()
	var err error
	for rr.NextRow() {
		if err != nil {
			continue
		}
		vals := rr.Values()
		if len(vals) != 1 || len(s.sd.Fields) != 1 {
			err = errUnexpected("sql path returned %d columns, want 1", len(vals))
			continue
		}
		err = c.sqlRow(vals[0], &s.sd.Fields[0], s.resultFmt[0], len(keys))
	}
	if _, cerr := rr.Close(); cerr != nil {
		return cerr
	}
	if err != nil {
		return err
	}
	return c.sqlEnd(len(keys))
}
