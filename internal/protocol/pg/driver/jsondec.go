package pg

import (
	"encoding/binary"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// rowDecoder decodes JSON rows into the Go values encoding/json gives
// (objects map[string]any, arrays []any, numbers float64, strings, bools,
// nil) for the load's hot path, with less work: one pass instead of a
// validation pass and a decoding pass, object keys interned (column names
// repeat in every row, in the same order), the top-level map of each row
// reused from one request to the next, and strings and numbers held in
// reused slabs (jsonvalues.go). Every value is still materialised; the
// rows of a request stay valid until the connection's next request, which
// calls reset. Rows of scalars allocate nothing once the slabs and maps
// have grown; nested arrays and objects are allocated. Not for concurrent
// use.
type rowDecoder struct {
	keys  map[string]string // interned object keys
	last  []string          // the keys of the last top-level object, in order
	width int               // the most keys a row had
	buf   []byte            // unescaping scratch
	sbuf  []byte            // a row's JSON text unescaped from a JSON string
	vals  values            // the strings and numbers of the request
}

// reset starts a request: the values of the previous one may be
// overwritten.
func (d *rowDecoder) reset() { d.vals.reset() }

// maxInterned bounds the interned keys of one connection.
const maxInterned = 1024

// maxDepth bounds nesting, as encoding/json does (10000).
const maxDepth = 10000

// decode decodes one JSON document. When it is an object and slot is not
// nil, it is decoded into the slot (jsonrow.go) instead of a new map.
func (d *rowDecoder) decode(raw []byte, slot *rowSlot) (any, error) {
	p := jsonParser{d: d, s: raw}
	p.skipSpace()
	v, err := p.value(slot, 0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i != len(p.s) {
		return nil, errJSON
	}
	return v, nil
}

// errJSON is the one error of the decoder: its text is what Do reports.
var errJSON = errUnexpected("invalid JSON in a row")

type jsonParser struct {
	d *rowDecoder
	s []byte
	i int
}

func (p *jsonParser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(slot *rowSlot, depth int) (any, error) {
	if p.i >= len(p.s) || depth > maxDepth {
		return nil, errJSON
	}
	switch c := p.s[p.i]; {
	case c == '{' && slot != nil:
		return p.row(slot, depth)
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		b, err := p.str()
		if err != nil {
			return nil, err
		}
		return p.d.vals.str(b), nil
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		f, err := p.number()
		if err != nil {
			return nil, err
		}
		return p.d.vals.num(f), nil
	}
	return nil, errJSON
}

func (p *jsonParser) literal(word string) error {
	if len(p.s)-p.i < len(word) || string(p.s[p.i:p.i+len(word)]) != word {
		return errJSON
	}
	p.i += len(word)
	return nil
}

// object decodes an object nested in a row (a row's own goes to its slot).
func (p *jsonParser) object(depth int) (any, error) {
	p.i++ // {
	m := make(map[string]any)
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return m, nil
	}
	for {
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, errJSON
		}
		kb, err := p.str()
		if err != nil {
			return nil, err
		}
		key := p.d.intern(kb)
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, errJSON
		}
		p.i++
		p.skipSpace()
		v, err := p.value(nil, depth+1)
		if err != nil {
			return nil, err
		}
		m[key] = v
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, errJSON
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, nil
		default:
			return nil, errJSON
		}
	}
}

func (p *jsonParser) array(depth int) (any, error) {
	p.i++ // [
	out := []any{}
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return out, nil
	}
	for {
		p.skipSpace()
		v, err := p.value(nil, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, errJSON
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return out, nil
		default:
			return nil, errJSON
		}
	}
}

// number parses a JSON number (the grammar strictly: no leading zeros, no
// leading '+', digits after '.' and 'e') as float64.
func (p *jsonParser) number() (float64, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
	case p.i < len(p.s) && p.s[p.i] >= '1' && p.s[p.i] <= '9':
		p.digits()
	default:
		return 0, errJSON
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if !p.digits() {
			return 0, errJSON
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return 0, errJSON
		}
	}
	if n, ok := smallInt(p.s[start:p.i]); ok {
		return float64(n), nil // exact, as ParseFloat would give it
	}
	f, err := strconv.ParseFloat(string(p.s[start:p.i]), 64)
	if err != nil {
		return 0, errJSON // out of range, as encoding/json reports
	}
	return f, nil
}

// smallInt parses an integer literal of at most 15 digits (exactly
// representable as float64); ok is false for anything else.
func smallInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		if n == 0 {
			return 0, false // -0 is a float64 of its own
		}
		n = -n
	}
	return n, true
}

// digits skips digits and reports whether there was one.
func (p *jsonParser) digits() bool {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// str parses a string and returns its unescaped bytes (valid until the next
// call). Invalid UTF-8 and lone surrogates become U+FFFD, as in
// encoding/json.
func (p *jsonParser) str() ([]byte, error) {
	p.i++ // "
	start := p.i
	// Eight bytes at a time while none is special (a quote, a backslash,
	// a control character or a non-ASCII byte), then one by one.
	for p.i+8 <= len(p.s) && !special8(binary.LittleEndian.Uint64(p.s[p.i:])) {
		p.i += 8
	}
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			b := p.s[start:p.i]
			p.i++
			return b, nil
		case c == '\\' || c >= utf8.RuneSelf:
			return p.slowStr(start)
		case c < ' ':
			return nil, errJSON
		}
		p.i++
	}
	return nil, errJSON
}

// special8 reports whether any of the 8 bytes in w is '"', '\\', below
// 0x20 or at least 0x80 (the classic SWAR zero-byte tests).
func special8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(x uint64) uint64 { return (x - ones) &^ x & highs }
	return (w&highs | (w-0x20*ones)&^w&highs | zero(w^'"'*ones) | zero(w^'\\'*ones)) != 0
}

// plain reports whether c stands for itself in a JSON string.
func plain(c byte) bool { return c >= ' ' && c < utf8.RuneSelf && c != '"' && c != '\\' }

// slowStr finishes a string that has escapes or non-ASCII bytes.
func (p *jsonParser) slowStr(start int) ([]byte, error) {
	b := append(p.d.buf[:0], p.s[start:p.i]...)
	defer func() { p.d.buf = b[:0] }()
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b, nil
		case c < ' ':
			return nil, errJSON
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return nil, errJSON
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return nil, errJSON
				}
				if utf16.IsSurrogate(r) {
					// A valid pair is consumed whole; anything else is
					// U+FFFD and the next escape is read on its own.
					if r2, ok := p.peekU4(); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							p.i += 6
							b = utf8.AppendRune(b, dec)
							continue
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
			default:
				return nil, errJSON
			}
		case c < utf8.RuneSelf:
			// A run of plain bytes, copied at once (a row's JSON text
			// inside a JSON string is mostly that, between \" escapes).
			start := p.i
			p.i++
			for p.i+8 <= len(p.s) && !special8(binary.LittleEndian.Uint64(p.s[p.i:])) {
				p.i += 8
			}
			for p.i < len(p.s) && plain(p.s[p.i]) {
				p.i++
			}
			b = append(b, p.s[start:p.i]...)
		default:
			r, size := utf8.DecodeRune(p.s[p.i:])
			p.i += size
			b = utf8.AppendRune(b, r)
		}
	}
	return nil, errJSON
}

// peekU4 reads a following \uXXXX escape without consuming it.
func (p *jsonParser) peekU4() (rune, bool) {
	if p.i+6 > len(p.s) || p.s[p.i] != '\\' || p.s[p.i+1] != 'u' {
		return 0, false
	}
	save := p.i
	p.i += 2
	r, ok := p.hex4()
	p.i = save
	return r, ok
}

// hex4 reads four hex digits.
func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	var r rune
	for _, c := range p.s[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	p.i += 4
	return r, true
}

// rowKey is intern for the nth key of a row's object: rows have the same
// keys in the same order, so the key at n in the last row is tried first,
// without a lookup.
func (d *rowDecoder) rowKey(n int, b []byte) string {
	if n < len(d.last) && d.last[n] == string(b) {
		return d.last[n]
	}
	s := d.intern(b)
	switch {
	case n < len(d.last):
		d.last[n] = s
	case n == len(d.last) && n < maxInterned:
		d.last = append(d.last, s)
	}
	return s
}

// intern returns b as a string, the same string for the same bytes.
func (d *rowDecoder) intern(b []byte) string {
	if s, ok := d.keys[string(b)]; ok {
		return s
	}
	s := string(b)
	if d.keys == nil {
		d.keys = make(map[string]string)
	}
	if len(d.keys) < maxInterned {
		d.keys[s] = s
	}
	return s
}
