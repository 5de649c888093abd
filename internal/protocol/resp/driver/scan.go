package resp

import (
	"bytes"
	"fmt"

	wire "github.com/benchrig/benchrig/internal/resp"
)

// Replies received in a buffer, as an event loop receives them, are parsed
// here: parseElement parses one element from the bytes at hand and says
// when they do not hold it all yet; scanner finds where a whole reply ends
// (the loop then checks it, through replyBuf); replyBuf reads a whole reply
// element by element as the checks ask. They accept what wire.Reader
// accepts (RESP2: simple strings, errors, integers, bulk strings, arrays,
// nested up to Limits.MaxDepth), with the same limits and the same kind of
// error (wrapping wire.ErrProtocol, and wire.ErrLimit for a limit), found
// before anything of the declared size is allocated; FuzzReplyScan holds
// them to it.

// limitsOf returns lim with its zero fields at their defaults, as
// wire.Reader fills them.
func limitsOf(lim wire.Limits) wire.Limits {
	def := wire.DefaultLimits()
	if lim.MaxBulk <= 0 {
		lim.MaxBulk = def.MaxBulk
	}
	if lim.MaxArray <= 0 {
		lim.MaxArray = def.MaxArray
	}
	if lim.MaxDepth <= 0 {
		lim.MaxDepth = def.MaxDepth
	}
	if lim.MaxLine <= 0 {
		lim.MaxLine = def.MaxLine
	}
	return lim
}

// parseElement parses the element at the start of b: one simple string,
// error, integer, bulk string, or an array's header (its elements follow).
// n is the element's size, 0 when b does not hold all of it yet (nothing
// in b is wrong so far); err reports malformed or over-limit bytes, at
// offset off of the stream. Slices in rep alias b.
func parseElement(b []byte, lim *wire.Limits, off int64) (rep wire.Reply, n int, err error) {
	if len(b) == 0 {
		return rep, 0, nil
	}
	if b[0] == byte(wire.KindBulk) {
		if rep, n, ok := bulkFast(b, lim); ok {
			return rep, n, nil
		}
	}
	kind := wire.Kind(b[0])
	switch kind {
	case wire.KindSimple, wire.KindError, wire.KindInt, wire.KindBulk, wire.KindArray:
	default:
		return rep, 0, protoErr(off, "expected a reply type ('+', '-', ':', '$' or '*'), got %s", wire.DescribeByte(b[0]))
	}
	i := bytes.IndexByte(b, '\n')
	switch {
	case i < 0 && len(b) > lim.MaxLine+2:
		return rep, 0, limitErr(off, "%s line longer than MaxLine=%d without CRLF", kind, lim.MaxLine)
	case i < 0:
		return rep, 0, nil
	case i-2 > lim.MaxLine:
		return rep, 0, limitErr(off, "%s line of %d bytes exceeds MaxLine=%d", kind, i-2, lim.MaxLine)
	case b[i-1] != '\r':
		return rep, 0, protoErr(off, "expected CRLF at end of %s line, got a bare LF", kind)
	}
	body := b[1 : i-1 : i-1]
	n = i + 1
	switch kind {
	case wire.KindSimple, wire.KindError:
		return wire.Reply{Kind: kind, Data: body, Len: len(body)}, n, nil
	case wire.KindInt:
		v, ok := wire.ParseInt(body)
		if !ok {
			return rep, 0, protoErr(off, "expected an integer after ':', got %s", wire.DescribeBytes(body))
		}
		return wire.Reply{Kind: wire.KindInt, Int: v}, n, nil
	case wire.KindArray:
		k, ok := wire.ParseInt(body)
		switch {
		case !ok || k < -1:
			return rep, 0, protoErr(off, "expected an array length (-1 or more) after '*', got %s", wire.DescribeBytes(body))
		case k == -1:
			return wire.Reply{Kind: wire.KindArray, Nil: true}, n, nil
		case k > int64(lim.MaxArray):
			return rep, 0, limitErr(off, "array length %d exceeds MaxArray=%d", k, lim.MaxArray)
		}
		return wire.Reply{Kind: wire.KindArray, Len: int(k)}, n, nil
	}
	// a bulk string
	k, ok := wire.ParseInt(body)
	switch {
	case !ok || k < -1:
		return rep, 0, protoErr(off, "expected a bulk string length (-1 or more) after '$', got %s", wire.DescribeBytes(body))
	case k == -1:
		return wire.Reply{Kind: wire.KindBulk, Nil: true}, n, nil
	case k > int64(lim.MaxBulk):
		return rep, 0, limitErr(off, "bulk string length %d exceeds MaxBulk=%d", k, lim.MaxBulk)
	}
	end := n + int(k) // where the CRLF after the data starts
	switch {
	case len(b) < end+2:
		return rep, 0, nil
	case b[end] != '\r' || b[end+1] != '\n':
		return rep, 0, protoErr(off+int64(end), "expected CRLF after bulk string of %d bytes, got %s", k, wire.DescribeBytes(b[end:end+2]))
	}
	return wire.Reply{Kind: wire.KindBulk, Len: int(k), Data: b[n:end:end]}, end + 2, nil
}

// bulkFast parses a bulk string of at most 10 length digits whose header
// and data are all in b, without searching for the end of the line; it
// declines (false) anything else, which parseElement's general path then
// parses, with the same result or error.
func bulkFast(b []byte, lim *wire.Limits) (wire.Reply, int, bool) {
	n, i := 0, 1
	for ; i < len(b) && i <= 10; i++ { // 10 digits cannot overflow an int
		c := b[i]
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	digits := i - 1
	if digits == 0 || digits > lim.MaxLine || n > lim.MaxBulk || i+2 > len(b) || b[i] != '\r' || b[i+1] != '\n' {
		return wire.Reply{}, 0, false
	}
	end := i + 2 + n
	if end+2 > len(b) || b[end] != '\r' || b[end+1] != '\n' {
		return wire.Reply{}, 0, false
	}
	return wire.Reply{Kind: wire.KindBulk, Len: n, Data: b[i+2 : end : end]}, end + 2, true
}

// nest accounts for element rep in the stack of open arrays (the elements
// still to come in each, innermost last), as wire.Reader does: it counts
// rep in its array, opens rep when it is a non-empty array header, and
// closes the arrays it completed.
func nest(stack []int, rep wire.Reply, lim *wire.Limits, off int64) ([]int, error) {
	if k := len(stack); k > 0 {
		stack[k-1]--
	}
	if rep.Kind == wire.KindArray && rep.Len > 0 {
		if len(stack) >= lim.MaxDepth {
			return stack, limitErr(off, "arrays nested deeper than MaxDepth=%d", lim.MaxDepth)
		}
		stack = append(stack, rep.Len)
	}
	for k := len(stack); k > 0 && stack[k-1] == 0; k-- {
		stack = stack[:k-1]
	}
	return stack, nil
}

// scanner finds where each reply ends in the bytes a connection received:
// scan says how long the reply at the start of its buffer is once all of
// it is there. It keeps its place between calls, so that a reply arriving
// in many reads is scanned once, element by element.
type scanner struct {
	lim   *wire.Limits // with defaults filled
	pos   int          // bytes of the reply scanned so far: whole elements
	stack []int        // the elements still to come in each open array
	off   int64        // stream offset of the reply's start, for errors
	// first is the reply's first element (an array's header, or all of
	// it), firstN its size: the checks read it from here (replyBuf.reset)
	// instead of parsing it again.
	first  wire.Reply
	firstN int
}

// scan looks for the end of the reply that starts b, whose first s.pos
// bytes it scanned before (b holds them still, unchanged). It returns the
// reply's size once b holds all of it (and starts afresh for the next
// one; s.first is then its first element, whose Data, when it has any,
// aliases b), 0 while it does not, or an error wrapping wire.ErrProtocol
// for bytes that cannot be a reply (wire.ErrLimit: over a limit).
func (s *scanner) scan(b []byte) (int, error) {
	for {
		if d := len(s.stack); d > 0 {
			// an array's bulk strings (an MGET's values) in one pass
			if k, size := scanBulks(b[s.pos:], s.stack[d-1], s.lim); k > 0 {
				s.pos += size
				s.stack[d-1] -= k
				for d > 0 && s.stack[d-1] == 0 {
					d--
					s.stack = s.stack[:d]
				}
				if d == 0 {
					size := s.pos
					s.pos, s.off = 0, s.off+int64(size)
					return size, nil
				}
				continue
			}
		}
		off := s.off + int64(s.pos)
		rep, n, err := parseElement(b[s.pos:], s.lim, off)
		if err != nil || n == 0 {
			return 0, err
		}
		if s.pos == 0 {
			s.first, s.firstN = rep, n
			if rep.Kind != wire.KindArray || rep.Len == 0 {
				s.off += int64(n)
				return n, nil // a reply of one element
			}
		}
		s.pos += n
		if s.stack, err = nest(s.stack, rep, s.lim, off); err != nil {
			return 0, err
		}
		if len(s.stack) == 0 {
			size := s.pos
			s.pos, s.off = 0, s.off+int64(size)
			return size, nil
		}
	}
}

// scanBulks scans up to most bulk strings at the start of b that are all
// there and that parseElement accepts (bulkFast's, and nil bulk strings),
// without making a Reply of each; it returns how many and their size, and
// stops at anything else, which parseElement then parses (or rejects).
func scanBulks(b []byte, most int, lim *wire.Limits) (k, pos int) {
	nilOK := lim.MaxLine >= 2 // "-1" is a line of 2
	for k < most && pos < len(b) && b[pos] == byte(wire.KindBulk) {
		if nilOK && len(b)-pos >= 5 && b[pos+1] == '-' && b[pos+2] == '1' && b[pos+3] == '\r' && b[pos+4] == '\n' {
			pos += 5
			k++
			continue
		}
		n, i := 0, pos+1
		for ; i < len(b) && i-pos <= 10; i++ { // 10 digits cannot overflow an int
			c := b[i]
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
		}
		digits := i - pos - 1
		if digits == 0 || digits > lim.MaxLine || n > lim.MaxBulk || i+2 > len(b) || b[i] != '\r' || b[i+1] != '\n' {
			break
		}
		end := i + 2 + n
		if end+2 > len(b) || b[end] != '\r' || b[end+1] != '\n' {
			break
		}
		pos = end + 2
		k++
	}
	return k, pos
}

// started reports whether part of a reply was scanned and more is awaited.
func (s *scanner) started() bool { return s.pos > 0 }

// reset forgets the reply in progress: a new connection, a new stream.
func (s *scanner) reset() {
	s.pos, s.off, s.stack = 0, 0, s.stack[:0]
}

func protoErr(off int64, format string, args ...any) error {
	return &wire.ProtocolError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func limitErr(off int64, format string, args ...any) error {
	return &wire.ProtocolError{Offset: off, Msg: fmt.Sprintf(format, args...), Limit: true}
}
