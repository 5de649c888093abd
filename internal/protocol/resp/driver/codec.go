package resp

import (
	wire "github.com/benchrig/benchrig/internal/resp"
)

// codec is what a connection of either kind (a goroutine's conn, an event
// loop's lconn) needs to speak for the driver: it encodes the requests and
// checks the replies, counting hits and nils and validating sampled values,
// with the same code on both paths. The replies come from src: the
// streaming wire.Reader of a goroutine's connection, or a whole reply in an
// event loop's read buffer (replyBuf).
type codec struct {
	d    *Driver
	src  replySource
	key  []byte            // scratch: one rendered key
	arg  []byte            // scratch: one rendered argument or value
	vals [][]byte          // scratch: the values of an MGET reply parsed at once
	msgs map[string]string // interned server error codes

	// Counts since the last flush into the Driver.
	hits, nils, validated, mismatches int64
	// wholeMatches counts the replies validated in one comparison
	// (matchWhole), for tests.
	wholeMatches int64
}

// replySource is what the checks read a reply from. *wire.Reader is one;
// replyBuf, over a reply already received whole, is the other, with the
// same results.
type replySource interface {
	// ReadReply reads one element (an array's header, then its elements).
	ReadReply() (wire.Reply, error)
	// ReadBuffered reads the next bulk strings of the innermost array
	// that are at hand, up to len(dst), and says how many.
	ReadBuffered(dst [][]byte) int
	// Peek returns the bytes at hand not yet read.
	Peek() []byte
	// SkipElements consumes size bytes as the next k elements.
	SkipElements(size, k int) bool
	// Depth is the number of arrays still open.
	Depth() int
	// Skip reads and discards one whole element.
	Skip() error
}

var (
	_ replySource = (*wire.Reader)(nil)
	_ replySource = (*replyBuf)(nil)
)

func newCodec(d *Driver, src replySource) codec {
	return codec{d: d, src: src, msgs: make(map[string]string), vals: make([][]byte, d.cfg.Batch)}
}

// appendRequest appends the command for request seq.
func (c *codec) appendRequest(dst []byte, seq uint64) []byte {
	d := c.d
	switch d.cfg.Command {
	case CommandMGET:
		dst = append(dst, d.head...)
		id, next := d.firstKey(seq)
		if next && d.keyTab != nil {
			return d.appendKeyRun(dst, id, d.cfg.Batch)
		}
		for i := 0; i < d.cfg.Batch; i++ {
			if i > 0 {
				id = d.keys(seq, i)
			}
			dst = c.appendKey(dst, id)
		}
	case CommandGET:
		dst = append(dst, d.head...)
		id, _ := d.firstKey(seq)
		dst = c.appendKey(dst, id)
	case CommandSET:
		id, _ := d.firstKey(seq)
		c.key = d.key.appendTo(c.key[:0], id, nil)
		c.arg = d.value.appendTo(c.arg[:0], id, nil)
		dst = wire.AppendArrayHeader(dst, 3)
		dst = wire.AppendBulk(dst, d.cmdName)
		dst = wire.AppendBulk(dst, c.key)
		dst = wire.AppendBulk(dst, c.arg)
	default: // custom
		id, _ := d.firstKey(seq)
		dst = wire.AppendArrayHeader(dst, len(d.args))
		for i := range d.args {
			c.arg = d.args[i].appendTo(c.arg[:0], id, &d.key)
			dst = wire.AppendBulk(dst, c.arg)
		}
	}
	return dst
}

// appendKey appends key number id as a bulk string: copied from the
// driver's table of encoded keys when it has one for id, else rendered.
func (c *codec) appendKey(dst []byte, id int64) []byte {
	if k := c.d.encodedKey(id); k != nil {
		return append(dst, k...)
	}
	c.key = c.d.key.appendTo(c.key[:0], id, nil)
	return wire.AppendBulk(dst, c.key)
}

// flush adds the connection's counts to the Driver's.
func (c *codec) flush() {
	if c.hits != 0 {
		c.d.hits.Add(c.hits)
		c.hits = 0
	}
	if c.nils != 0 {
		c.d.nils.Add(c.nils)
		c.nils = 0
	}
	if c.validated != 0 {
		c.d.validated.Add(c.validated)
		c.validated = 0
	}
	if c.mismatches != 0 {
		c.d.mismatches.Add(c.mismatches)
		c.mismatches = 0
	}
}
