package resp

import (
	wire "github.com/benchrig/benchrig/internal/resp"
)

// replyBuf reads a reply that is all in memory (an event loop's read buffer,
// where the scanner found it whole) element by element, in place, for the
// checks of codec: a replySource as wire.Reader is, with its results, and
// without reading from anywhere. Slices it returns alias the buffer.
type replyBuf struct {
	b     []byte // the reply
	pos   int    // bytes of it read
	lim   *wire.Limits
	stack []int // elements still to come in each open array, innermost last
	off   int64 // stream offset of b, for errors
	// first is b's first element, already parsed (the scanner's), of
	// firstN bytes; 0 when it is to be parsed.
	first  wire.Reply
	firstN int
}

// reset makes b, a whole reply at stream offset off, the one to read;
// first, of firstN bytes (0: none), is its first element as the scanner
// parsed it.
func (r *replyBuf) reset(b []byte, off int64, first wire.Reply, firstN int) {
	r.b, r.pos, r.stack, r.off = b, 0, r.stack[:0], off
	r.first, r.firstN = first, firstN
}

// ReadReply implements replySource.
func (r *replyBuf) ReadReply() (wire.Reply, error) {
	off := r.off + int64(r.pos)
	var rep wire.Reply
	var n int
	var err error
	if r.pos == 0 && r.firstN > 0 {
		rep, n = r.first, r.firstN
	} else {
		rep, n, err = parseElement(r.b[r.pos:], r.lim, off)
	}
	if err == nil && n == 0 {
		// a reply the scanner found whole cannot end early
		err = protoErr(off, "reply ends inside an element")
	}
	if err != nil {
		return wire.Reply{}, err
	}
	r.pos += n
	if r.stack, err = nest(r.stack, rep, r.lim, off); err != nil {
		return wire.Reply{}, err
	}
	return rep, nil
}

// ReadBuffered implements replySource: the next bulk strings of the
// innermost array, up to len(dst), all at hand (dst[i] nil for a nil bulk
// string).
func (r *replyBuf) ReadBuffered(dst [][]byte) int {
	d := len(r.stack)
	if d == 0 {
		return 0
	}
	left := r.stack[d-1]
	want := min(len(dst), left)
	b, pos := r.b, r.pos
	k := 0
	for ; k < want && pos < len(b) && b[pos] == byte(wire.KindBulk); k++ {
		if rest := b[pos:]; len(rest) >= 5 && rest[1] == '-' && rest[2] == '1' && rest[3] == '\r' && rest[4] == '\n' {
			dst[k] = nil
			pos += 5
			continue
		}
		rep, n, ok := bulkFast(b[pos:], r.lim)
		if !ok {
			break // ReadReply's to parse
		}
		dst[k] = rep.Data
		pos += n
	}
	if k == 0 {
		return 0
	}
	r.pos = pos
	r.stack[d-1] = left - k
	for n := len(r.stack); n > 0 && r.stack[n-1] == 0; n-- {
		r.stack = r.stack[:n-1]
	}
	return k
}

// Peek implements replySource.
func (r *replyBuf) Peek() []byte { return r.b[r.pos:len(r.b):len(r.b)] }

// SkipElements implements replySource: the caller vouches that size bytes
// are k whole elements, none an array (see wire.Reader.SkipElements).
func (r *replyBuf) SkipElements(size, k int) bool {
	d := len(r.stack)
	if d == 0 || k < 1 || k > r.stack[d-1] || size < 3*k || size > len(r.b)-r.pos {
		return false
	}
	r.pos += size
	r.stack[d-1] -= k
	for n := len(r.stack); n > 0 && r.stack[n-1] == 0; n-- {
		r.stack = r.stack[:n-1]
	}
	return true
}

// Depth implements replySource.
func (r *replyBuf) Depth() int { return len(r.stack) }

// Skip implements replySource.
func (r *replyBuf) Skip() error {
	d := len(r.stack)
	for {
		if _, err := r.ReadReply(); err != nil {
			return err
		}
		if len(r.stack) <= d {
			return nil
		}
	}
}

// Consumed returns the bytes of the reply read so far.
func (r *replyBuf) Consumed() int { return r.pos }
