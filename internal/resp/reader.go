package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// initialBufSize is the Reader's starting buffer; it grows (doubling, and only
// as data arrives) when an element does not fit.
const initialBufSize = 16 << 10

// Reader parses RESP2 replies from an io.Reader through its own buffer.
//
// ReadReply returns one element at a time; an array's elements follow its
// header. The Reader tracks open arrays, so it enforces Limits.MaxDepth and
// Skip can discard a whole reply. Slices in a returned Reply alias the buffer
// and are valid until the next call on the Reader.
//
// After an I/O or protocol error the Reader is out of step with its peer:
// every later call returns the same error until Reset.
type Reader struct {
	rd       io.Reader
	buf      []byte
	r, w     int   // unread data is buf[r:w]
	consumed int64 // bytes consumed since Reset
	lim      Limits
	stack    []int  // elements still to come in each open array, innermost last
	err      error  // sticky
	scratch  []byte // ReadCommand: argument bytes
	argEnds  []int  // ReadCommand: end offset of each argument in scratch
}

// NewReader returns a Reader of rd with the given limits (zero fields take
// their defaults).
func NewReader(rd io.Reader, lim Limits) *Reader {
	lim = lim.withDefaults()
	return &Reader{
		rd:    rd,
		buf:   make([]byte, initialBufSize),
		lim:   lim,
		stack: make([]int, 0, lim.MaxDepth),
	}
}

// Reset discards all state and reads from rd from now on, keeping the buffer.
func (r *Reader) Reset(rd io.Reader) {
	r.rd = rd
	r.r, r.w = 0, 0
	r.consumed = 0
	r.stack = r.stack[:0]
	r.err = nil
}

// Limits returns the limits in force (defaults filled in).
func (r *Reader) Limits() Limits { return r.lim }

// Buffered returns the number of bytes read from the io.Reader but not yet
// parsed. A server uses it to decide when to flush pipelined replies.
func (r *Reader) Buffered() int { return r.w - r.r }

// Consumed returns the number of bytes parsed since NewReader or Reset. The
// difference across a reply is that reply's size on the wire.
func (r *Reader) Consumed() int64 { return r.consumed }

// Depth returns the number of arrays whose elements are still being read (0
// between whole replies).
func (r *Reader) Depth() int { return len(r.stack) }

// ReadReply reads one reply element. For an array it returns the header (Len
// elements, or Nil); the elements are read by the following calls. Server
// error replies are returned as KindError replies with a nil error.
//
// At a clean end of input between replies it returns io.EOF; in the middle of
// a reply, an error wrapping io.ErrUnexpectedEOF.
func (r *Reader) ReadReply() (Reply, error) {
	if r.err != nil {
		return Reply{}, r.err
	}
	var rep Reply
	ok := false
	if r.r < r.w && r.buf[r.r] == byte(KindBulk) {
		rep, ok = r.bulkFast()
	}
	if !ok {
		var err error
		if rep, err = r.readElement(); err != nil {
			r.err = err
			return Reply{}, err
		}
	}
	if n := len(r.stack); n > 0 {
		r.stack[n-1]--
	}
	if rep.Kind == KindArray && rep.Len > 0 {
		if len(r.stack) >= r.lim.MaxDepth {
			r.err = r.limitErr("arrays nested deeper than MaxDepth=%d", r.lim.MaxDepth)
			return Reply{}, r.err
		}
		r.stack = append(r.stack, rep.Len)
	}
	for n := len(r.stack); n > 0 && r.stack[n-1] == 0; n-- {
		r.stack = r.stack[:n-1]
	}
	return rep, nil
}

// Skip reads and discards one whole reply element: for an array, the header
// and all its elements, nested ones included.
func (r *Reader) Skip() error {
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

// readElement parses one element without depth accounting.
func (r *Reader) readElement() (Reply, error) {
	atStart := len(r.stack) == 0
	if err := r.ensure(1, atStart); err != nil {
		return Reply{}, err
	}
	kind := Kind(r.buf[r.r])
	switch kind {
	case KindSimple, KindError, KindInt, KindBulk, KindArray:
	default:
		return Reply{}, r.protoErr("expected a reply type ('+', '-', ':', '$' or '*'), got %s", DescribeByte(byte(kind)))
	}
	line, err := r.readLine()
	if err != nil {
		return Reply{}, err
	}
	body := line[1:]
	switch kind {
	case KindSimple, KindError:
		return Reply{Kind: kind, Data: body, Len: len(body)}, nil
	case KindInt:
		v, ok := ParseInt(body)
		if !ok {
			return Reply{}, r.protoErr("expected an integer after ':', got %s", DescribeBytes(body))
		}
		return Reply{Kind: KindInt, Int: v}, nil
	case KindArray:
		n, ok := ParseInt(body)
		switch {
		case !ok || n < -1:
			return Reply{}, r.protoErr("expected an array length (-1 or more) after '*', got %s", DescribeBytes(body))
		case n == -1:
			return Reply{Kind: KindArray, Nil: true}, nil
		case n > int64(r.lim.MaxArray):
			return Reply{}, r.limitErr("array length %d exceeds MaxArray=%d", n, r.lim.MaxArray)
		}
		return Reply{Kind: KindArray, Len: int(n)}, nil
	}
	// KindBulk
	n, ok := ParseInt(body)
	switch {
	case !ok || n < -1:
		return Reply{}, r.protoErr("expected a bulk string length (-1 or more) after '$', got %s", DescribeBytes(body))
	case n == -1:
		return Reply{Kind: KindBulk, Nil: true}, nil
	case n > int64(r.lim.MaxBulk):
		return Reply{}, r.limitErr("bulk string length %d exceeds MaxBulk=%d", n, r.lim.MaxBulk)
	}
	data, err := r.readBulkBody(int(n))
	if err != nil {
		return Reply{}, err
	}
	return Reply{Kind: KindBulk, Len: len(data), Data: data}, nil
}

// bulkFast parses a bulk string whose header and body are both already
// buffered, the common case in MGET replies, without searching for the end
// of the line. It declines (false) anything else: a nil bulk, a header that
// is malformed or over a limit, data still to arrive; readElement's general
// path then parses it, with its errors.
func (r *Reader) bulkFast() (Reply, bool) {
	b := r.buf[r.r+1 : r.w]
	n, i := 0, 0
	for ; i < len(b) && i < 10; i++ { // 10 digits cannot overflow an int
		c := b[i]
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	if i == 0 || i > r.lim.MaxLine || n > r.lim.MaxBulk || i+2 > len(b) || b[i] != '\r' || b[i+1] != '\n' {
		return Reply{}, false
	}
	end := i + 2 + n // index in b of the CR after the data
	if end+2 > len(b) || b[end] != '\r' || b[end+1] != '\n' {
		return Reply{}, false
	}
	data := b[i+2 : end : end]
	r.advance(1 + end + 2)
	return Reply{Kind: KindBulk, Len: n, Data: data}, true
}

// readBulkBody reads n payload bytes and the CRLF after them.
func (r *Reader) readBulkBody(n int) ([]byte, error) {
	if err := r.ensure(n+2, false); err != nil {
		return nil, err
	}
	if r.buf[r.r+n] != '\r' || r.buf[r.r+n+1] != '\n' {
		r.advance(n)
		return nil, r.protoErr("expected CRLF after bulk string of %d bytes, got %s", n, DescribeBytes(r.buf[r.r:r.r+2]))
	}
	data := r.buf[r.r : r.r+n : r.r+n]
	r.advance(n + 2)
	return data, nil
}

// readLine returns the next line (type byte included, CRLF excluded) as a
// slice of the buffer and consumes it.
func (r *Reader) readLine() ([]byte, error) {
	scanned := 0 // bytes of buf[r.r:] already searched for '\n'
	for {
		if i := bytes.IndexByte(r.buf[r.r+scanned:r.w], '\n'); i >= 0 {
			end := r.r + scanned + i // index of '\n'
			if body := end - r.r - 2; body > r.lim.MaxLine {
				return nil, r.limitErr("%s line of %d bytes exceeds MaxLine=%d", Kind(r.buf[r.r]), body, r.lim.MaxLine)
			}
			if end == r.r || r.buf[end-1] != '\r' {
				return nil, r.protoErr("expected CRLF at end of %s line, got a bare LF", Kind(r.buf[r.r]))
			}
			line := r.buf[r.r : end-1 : end-1]
			r.advance(end + 1 - r.r)
			return line, nil
		}
		scanned = r.w - r.r
		if scanned > r.lim.MaxLine+2 {
			return nil, r.limitErr("%s line longer than MaxLine=%d without CRLF", Kind(r.buf[r.r]), r.lim.MaxLine)
		}
		if err := r.ensure(scanned+1, false); err != nil {
			return nil, err
		}
	}
}

// advance consumes n buffered bytes.
func (r *Reader) advance(n int) {
	r.r += n
	r.consumed += int64(n)
}

// maxEmptyReads bounds consecutive (0, nil) reads before giving up.
const maxEmptyReads = 100

// ensure makes at least n bytes available in buf[r.r:r.w], compacting and
// growing the buffer as needed. The buffer grows by doubling, and only when it
// is full of received data, so a declared length alone never allocates.
// atStart says no byte of the current reply has been consumed, in which case
// a clean end of input is io.EOF rather than io.ErrUnexpectedEOF.
func (r *Reader) ensure(n int, atStart bool) error {
	if r.r == r.w && r.r > 0 {
		// Nothing buffered: read from the start, so that the next reply
		// gets the whole buffer in one read instead of the tail of it.
		r.r, r.w = 0, 0
	}
	empty := 0
	for r.w-r.r < n {
		if r.w == len(r.buf) {
			if r.r > 0 {
				copy(r.buf, r.buf[r.r:r.w])
				r.w -= r.r
				r.r = 0
			} else {
				// Full of received data: double. Never size to n, which
				// may be a declared length with no data behind it yet.
				size := 2 * len(r.buf)
				if size < initialBufSize {
					size = initialBufSize
				}
				nb := make([]byte, size)
				copy(nb, r.buf[:r.w])
				r.buf = nb
			}
		}
		m, err := r.rd.Read(r.buf[r.w:])
		r.w += m
		if r.w-r.r >= n {
			return nil
		}
		if err != nil {
			return r.readErr(err, atStart && r.w == r.r)
		}
		if m == 0 {
			if empty++; empty >= maxEmptyReads {
				return fmt.Errorf("resp: read: %w", io.ErrNoProgress)
			}
		}
	}
	return nil
}

// readErr wraps an error from the underlying reader.
func (r *Reader) readErr(err error, clean bool) error {
	if errors.Is(err, io.EOF) {
		if clean {
			return io.EOF
		}
		return fmt.Errorf("resp: connection closed mid-reply after %d bytes: %w", r.consumed+int64(r.w-r.r), io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("resp: read: %w", err)
}

// ParseInt parses a RESP integer: an optional '-' and 1 to 19 decimal digits,
// without overflow. It does not allocate.
func ParseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}
