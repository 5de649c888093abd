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
func (c *conn) readOne(seq uint64) (driver.Class, string, error) {
	rep, err := c.rd.ReadReply()
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
		if msg := c.count(rep, seq, 0, c.d.sampled(seq)); msg != "" {
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

// readMGET reads the elements of an MGET reply whose header is hdr.
func (c *conn) readMGET(seq uint64, hdr wire.Reply) (driver.Class, string, error) {
	if hdr.Kind != wire.KindArray || hdr.Nil {
		return driver.Unexpected, msgMGETNotArray, c.sync()
	}
	if hdr.Len != c.d.cfg.Batch {
		return driver.Unexpected, fmt.Sprintf("MGET reply has %d elements, want %d", hdr.Len, c.d.cfg.Batch), c.sync()
	}
	validate := c.d.sampled(seq)
	class, msg := driver.OK, ""
	for i := 0; i < hdr.Len; i++ {
		el, err := c.rd.ReadReply()
		if err != nil {
			return driver.Error, "", err
		}
		if el.Kind != wire.KindBulk {
			return driver.Unexpected, msgMGETElement, c.sync()
		}
		if m := c.count(el, seq, i, validate); m != "" && class == driver.OK {
			class, msg = driver.Unexpected, m
		}
	}
	return class, msg, nil
}

// count counts a bulk value as hit or nil and, when validate, compares it
// with the reference value of the i-th key of request seq. It returns a
// mismatch message, or "".
func (c *conn) count(v wire.Reply, seq uint64, i int, validate bool) string {
	if v.Nil {
		c.nils++
	} else {
		c.hits++
	}
	if !validate {
		return ""
	}
	c.validated++
	want, ok := c.d.cfg.Reference(c.d.keys(seq, i))
	var msg string
	switch {
	case ok && v.Nil:
		msg = msgUnexpectedNil
	case !ok && !v.Nil:
		msg = msgUnexpectedHit
	case ok && !bytes.Equal(v.Data, want):
		msg = msgValueMismatch
	}
	if msg != "" {
		c.mismatches++
	}
	return msg
}

// sync reads the rest of the current reply, if it is an array.
func (c *conn) sync() error {
	for c.rd.Depth() > 0 {
		if err := c.rd.Skip(); err != nil {
			return err
		}
	}
	return nil
}

// serverError returns the Outcome message for a server error reply: its code
// ("ERR", "WRONGTYPE"), interned so that the hot path does not allocate.
func (c *conn) serverError(data []byte) string {
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
