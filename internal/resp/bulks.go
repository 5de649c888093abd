package resp

// ReadBuffered parses the next elements of the innermost open array while
// they are bulk strings whose header and payload are already buffered, up to
// len(dst) of them, and returns how many it parsed. Each payload goes into
// dst[i] as a slice of the buffer, valid until the next call on the Reader,
// and nil for a nil bulk string ("$-1"); an empty bulk string ("$0") is an
// empty, non-nil slice.
//
// It never reads from the underlying reader and never fails: it stops (and
// returns fewer) at the end of the buffered data, at the end of the array,
// at an element of another kind, and at anything malformed or over a limit,
// which the next ReadReply then reads or reports. Outside an array it
// returns 0. It is the MGET reply's hot path: the elements that arrived
// together are parsed in one tight loop, with the same checks as ReadReply.
func (r *Reader) ReadBuffered(dst [][]byte) int {
	d := len(r.stack)
	if r.err != nil || d == 0 {
		return 0
	}
	left := r.stack[d-1]
	want := min(len(dst), left)
	buf, pos, maxLine, maxBulk := r.buf[:r.w], r.r, r.lim.MaxLine, r.lim.MaxBulk
	k := 0
	for ; k < want; k++ {
		if pos >= len(buf) || buf[pos] != byte(KindBulk) {
			break
		}
		b := buf[pos+1:]
		if len(b) >= 4 && b[0] == '-' && b[1] == '1' && b[2] == '\r' && b[3] == '\n' {
			dst[k] = nil
			pos += 5
			continue
		}
		n, i := 0, 0
		for ; i < len(b) && i < 10; i++ { // 10 digits cannot overflow an int
			c := b[i]
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
		}
		if i == 0 || i > maxLine || n > maxBulk || i+2 > len(b) || b[i] != '\r' || b[i+1] != '\n' {
			break
		}
		end := i + 2 + n // index in b of the CR after the data
		if end+2 > len(b) || b[end] != '\r' || b[end+1] != '\n' {
			break
		}
		dst[k] = b[i+2 : end : end]
		pos += 1 + end + 2
	}
	if k == 0 {
		return 0
	}
	r.consumed += int64(pos - r.r)
	r.r = pos
	r.stack[d-1] = left - k
	for n := len(r.stack); n > 0 && r.stack[n-1] == 0; n-- {
		r.stack = r.stack[:n-1]
	}
	return k
}

// Peek returns the bytes buffered and not yet parsed, without reading more.
// The slice aliases the buffer and is valid until the next call on the
// Reader.
func (r *Reader) Peek() []byte { return r.buf[r.r:r.w:r.w] }

// SkipElements consumes the first size bytes of Peek as the next k elements
// of the innermost open array. The caller vouches that those bytes are k
// whole elements that are not arrays, typically by having compared them
// with the canonical encoding of the k values it expects; the Reader checks
// only that the array has k elements left and that size bytes are
// buffered, and otherwise consumes nothing and returns false.
func (r *Reader) SkipElements(size, k int) bool {
	d := len(r.stack)
	if r.err != nil || d == 0 || k < 1 || k > r.stack[d-1] || size < 3*k || size > r.w-r.r {
		return false
	}
	r.advance(size)
	r.stack[d-1] -= k
	for n := len(r.stack); n > 0 && r.stack[n-1] == 0; n-- {
		r.stack = r.stack[:n-1]
	}
	return true
}
