//go:build linux

package pg

import (
	"encoding/binary"
	"math"
)

// bindTmpl is the last request a loop connection sent with one statement:
// its messages (Bind, a Describe of the portal when the statement returns
// no columns, Execute, Sync) and where the keys' values sit in them. The
// next request with as many keys patches the values in place instead of
// encoding the parameters and the messages again; only the values change
// (a 64-key array's header, lengths and formats stay as they are).
type bindTmpl struct {
	s      *stmt // the statement it was built for (a reopen prepares new ones)
	n      int   // its number of keys
	array  bool  // the keys are one array parameter, else one parameter each
	size   int   // the keys' binary size: 8, 4 or 2; 0 when they cannot be patched
	off    int   // where the first key's value starts
	stride int   // bytes from one key's value to the next
	msg    []byte
}

// sendKeys sends statement s with keys as its parameters: one array
// parameter (array), or one parameter per key (NULL past the last key).
func (l *loop) sendKeys(c *lconn, t *bindTmpl, s *stmt, keys []int64, array bool) error {
	if err := t.encode(c.c, s, keys, array); err != nil {
		return err
	}
	c.Out.Pending = t.msg
	l.write(c)
	return nil
}

// encode makes t.msg the request of s with keys: patched when t was built
// for s and as many keys, else built (with c's parameter encoders).
func (t *bindTmpl) encode(c *Conn, s *stmt, keys []int64, array bool) error {
	if t.s == s && t.n == len(keys) && t.array == array && t.size > 0 {
		return t.patch(keys)
	}
	return t.build(c, s, keys, array)
}

// build encodes keys as s's parameters, the request's messages around
// them, and where each key's value sits.
func (t *bindTmpl) build(c *Conn, s *stmt, keys []int64, array bool) error {
	t.s = nil
	var err error
	if array {
		err = c.encodeArray(s, keys)
	} else {
		err = c.encodeKeys(s, keys)
	}
	if err != nil {
		return err
	}
	t.msg = appendRequest(t.msg[:0], s, c.params)
	t.s, t.n, t.array, t.size = s, len(keys), array, 0
	// The Bind's header: type, length, the unnamed portal, the statement's
	// name, one format code (2+2 bytes), the parameter count (2).
	first := 1 + 4 + 1 + len(s.sd.Name) + 1 + 4 + 2
	oid := s.paramOID
	if array {
		oid = elemOf(s.paramOID)
		first += 4 + 20 // the parameter's length, the array's header
	}
	size := intSize(oid)
	if !array {
		for _, o := range s.sd.ParamOIDs {
			if o != oid {
				return nil // parameters of several types: built every time
			}
		}
	}
	t.size, t.off, t.stride = size, first+4, 4+size
	return nil
}

// patch writes keys' values over the previous request's, with the range
// checks of appendInt.
func (t *bindTmpl) patch(keys []int64) error {
	b := t.msg[t.off:]
	for i, k := range keys {
		v := b[i*t.stride:]
		switch t.size {
		case 8:
			binary.BigEndian.PutUint64(v, uint64(k))
		case 4:
			if k < math.MinInt32 || k > math.MaxInt32 {
				t.s = nil // half patched: built again next time
				return errUnexpected("key %d does not fit an integer parameter", k)
			}
			binary.BigEndian.PutUint32(v, uint32(int32(k)))
		case 2:
			if k < math.MinInt16 || k > math.MaxInt16 {
				t.s = nil
				return errUnexpected("key %d does not fit a smallint parameter", k)
			}
			binary.BigEndian.PutUint16(v, uint16(int16(k)))
		}
	}
	return nil
}

// appendRequest appends one statement's messages, as pgconn's
// ExecStatement writes them: Bind (the parameters in binary, the result
// formats), a Describe of the portal when the statement returns no
// columns, Execute, Sync.
func appendRequest(b []byte, s *stmt, ps [][]byte) []byte {
	start := len(b)
	b = append(b, 'B', 0, 0, 0, 0, 0) // unnamed portal
	b = append(b, s.sd.Name...)
	b = append(b, 0, 0, 1, 0, 1) // one format code for all: binary
	b = binary.BigEndian.AppendUint16(b, uint16(len(ps)))
	for _, p := range ps {
		if p == nil {
			b = append(b, 0xff, 0xff, 0xff, 0xff) // NULL
			continue
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(s.resultFmt)))
	for _, f := range s.resultFmt {
		b = binary.BigEndian.AppendUint16(b, uint16(f))
	}
	binary.BigEndian.PutUint32(b[start+1:], uint32(len(b)-start-1))
	if len(s.sd.Fields) == 0 {
		b = append(b, 'D', 0, 0, 0, 6, 'P', 0)
	}
	return append(b, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0, 'S', 0, 0, 0, 4)
}
