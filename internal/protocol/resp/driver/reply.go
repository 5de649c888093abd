package resp

import (
	"bytes"
	"fmt"

	"github.com/benchrig/benchrig/internal/driver"
	wire "github.com/benchrig/benchrig/internal/resp"
)

// Messages of unexpected replies: a small, fixed set (errors are counted by
// message).
const (
	msgMGETNotArray   = "MGET reply is not an array"
	msgMGETElement    = "MGET element is not a bulk string"
	msgGETNotBulk     = "GET reply is not a bulk string"
	msgSETNotOK       = "SET reply is not +OK"
	msgValueMismatch  = "value differs from reference"
	msgUnexpectedNil  = "nil where reference has a value"
	msgUnexpectedHit  = "value where reference has none"
	msgServerError    = "server error"
	maxInternedErrors = 32
)

// readOne reads and checks the reply to request seq. A non-nil error means
// the connection is out of step; otherwise the whole reply was consumed.
// A GET or MGET answered, but nil for one or more of its keys, is a Miss:
// never a success.
func (c *codec) readOne(seq uint64) (driver.Class, string, error) {
	nils := c.nils
	class, msg, err := c.readReply(seq)
	if class == driver.OK && err == nil && c.nils != nils {
		return driver.Miss, msgMiss, nil
	}
	return class, msg, err
}

// msgMiss is the message of a Miss (not counted by message: misses are
// their own class).
const msgMiss = "nil reply"

// readReply is readOne before the misses are told apart.
func (c *codec) readReply(seq uint64) (driver.Class, string, error) {
	rep, err := c.src.ReadReply()
	if err != nil {
		return driver.Error, "", err
	}
	if rep.Kind == wire.KindError {
		return driver.Error, c.serverError(rep.Data), nil
	}
	switch c.d.cfg.Command {
	case CommandMGET:
		return c.readMGET(seq, rep)
	case CommandGET:
		if rep.Kind != wire.KindBulk {
			return driver.Unexpected, msgGETNotBulk, c.sync()
		}
		c.vals[0] = bulkValue(rep)
		if msg := c.count(c.vals[:1], seq, 0, c.d.sampled(seq)); msg != "" {
			return driver.Unexpected, msg, nil
		}
	case CommandSET:
		if rep.Kind != wire.KindSimple || string(rep.Data) != "OK" {
			return driver.Unexpected, msgSETNotOK, c.sync()
		}
	default: // custom: any reply but an error is accepted
		return driver.OK, "", c.sync()
	}
	return driver.OK, "", nil
}

// readMGET reads the elements of an MGET reply whose header is hdr: those
// already buffered in one pass (Reader.ReadBuffered), the others one by one
// as they arrive.
func (c *codec) readMGET(seq uint64, hdr wire.Reply) (driver.Class, string, error) {
	if hdr.Kind != wire.KindArray || hdr.Nil {
		return driver.Unexpected, msgMGETNotArray, c.sync()
	}
	n := hdr.Len
	if n != c.d.cfg.Batch {
		return driver.Unexpected, fmt.Sprintf("MGET reply has %d elements, want %d", n, c.d.cfg.Batch), c.sync()
	}
	validate := c.d.sampled(seq)
	if validate && c.matchWhole(seq, n) {
		return driver.OK, "", nil
	}
	class, msg := driver.OK, ""
	for i := 0; i < n; {
		vals := c.vals[:c.src.ReadBuffered(c.vals[:n-i])]
		if len(vals) == 0 {
			el, err := c.src.ReadReply()
			if err != nil {
				return driver.Error, "", err
			}
			if el.Kind != wire.KindBulk {
				return driver.Unexpected, msgMGETElement, c.sync()
			}
			c.vals[0] = bulkValue(el)
			vals = c.vals[:1]
		}
		if m := c.count(vals, seq, i, validate); m != "" && class == driver.OK {
			class, msg = driver.Unexpected, m
		}
		i += len(vals)
	}
	return class, msg, nil
}

// matchWhole handles a validated MGET reply of n consecutive keys in one
// comparison when it is all buffered and byte for byte the reference's
// encoding of the values expected (Driver.ref): then every value is right,
// and the hits are the keys that have a value. It returns false, having
// consumed nothing, when it cannot tell; readMGET then checks the reply value
// by value, which finds the same when the values are right, and which values
// are wrong when they are not.
func (c *codec) matchWhole(seq uint64, n int) bool {
	d := c.d
	if d.ref.enc == nil {
		return false
	}
	id, next := d.firstKey(seq)
	if !next {
		return false
	}
	size, hits, ok := d.ref.match(c.src.Peek(), id, n)
	if !ok || !c.src.SkipElements(size, n) {
		return false
	}
	c.hits += int64(hits)
	c.nils += int64(n - hits)
	c.validated += int64(n)
	c.wholeMatches++
	return true
}

// emptyValue stands for an empty bulk string ("$0"), which is a value, not
// a missing key.
var emptyValue = []byte{}

// bulkValue returns a bulk reply's value as count takes it: nil for a nil
// bulk string, a non-nil slice otherwise.
func bulkValue(el wire.Reply) []byte {
	switch {
	case el.Nil:
		return nil
	case el.Data == nil:
		return emptyValue
	}
	return el.Data
}

// count counts the values of the keys first, first+1, … of request seq as
// hits (non-nil) or nils and, when validate, compares each with the
// reference value of its key. It returns a mismatch message, or "".
func (c *codec) count(vals [][]byte, seq uint64, first int, validate bool) string {
	hits := 0
	for _, v := range vals {
		if v != nil {
			hits++
		}
	}
	c.hits += int64(hits)
	c.nils += int64(len(vals) - hits)
	if !validate {
		return ""
	}
	d := c.d
	c.validated += int64(len(vals))
	id, next := d.firstKey(seq)
	if first > 0 {
		id = d.keys(seq, first)
	}
	var msg string
	for j, v := range vals {
		switch {
		case j == 0:
		case next && id == d.cfg.KeySpace:
			id = 1
		case next:
			id++
		default:
			id = d.keys(seq, first+j)
		}
		want, ok := d.reference(id)
		var m string
		switch {
		case ok && v == nil:
			m = msgUnexpectedNil
		case !ok && v != nil:
			m = msgUnexpectedHit
		case ok && !bytes.Equal(v, want):
			m = msgValueMismatch
		default:
			continue
		}
		c.mismatches++
		if msg == "" {
			msg = m
		}
	}
	return msg
}

// sync reads the rest of the current reply, if it is an array.
func (c *codec) sync() error {
	for c.src.Depth() > 0 {
		if err := c.src.Skip(); err != nil {
			return err
		}
	}
	return nil
}

// serverError returns the Outcome message for a server error reply: its code
// ("ERR", "WRONGTYPE"), interned so that the hot path does not allocate.
func (c *codec) serverError(data []byte) string {
	if !c.d.sawServerError.Load() {
		c.d.sawServerError.Store(true)
		c.d.noteServerError(data)
	}
	code := wire.ErrorPrefix(data)
	if len(code) == 0 {
		return msgServerError
	}
	if s, ok := c.msgs[string(code)]; ok {
		return s
	}
	if len(c.msgs) >= maxInternedErrors {
		return msgServerError
	}
	s := string(code)
	c.msgs[s] = s
	return s
}

// sampled reports whether request seq is validated: a fixed fraction of
// sequence numbers, chosen by a multiplicative hash.
func (d *Driver) sampled(seq uint64) bool {
	f := d.cfg.ValidateSampled
	switch {
	case f <= 0:
		return false
	case f >= 1:
		return true
	}
	h := seq * 0x9E3779B97F4A7C15
	return float64(h>>11)/(1<<53) < f
}
