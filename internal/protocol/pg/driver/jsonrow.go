package pg

import "unsafe"

// rowSlot is one row slot of a connection: the map a row (a JSON object)
// is decoded into, reused from one request to the next, and the cells its
// strings and numbers live in. The map's values for strings and numbers
// refer to the cells (jsonvalues.go's box), so a row with the same keys in
// the same order and of the same kinds as the slot's last one is decoded
// by writing its values into the cells: no map operation at all, where
// clearing and filling the map would hash every key. A row of another
// shape (keys, their order or their kinds) rebuilds the map.
type rowSlot struct {
	m     map[string]any
	n     int      // keys of the last row decoded; -1: the map must be rebuilt
	keys  []string // the keys in order (a repeated key too: the last wins)
	kinds []kind
	vals  []any // what the map holds for each key
	strs  []string
	nums  []float64
}

// kind is the kind of a row's value in a rowSlot.
type kind uint8

const (
	kindOther  kind = iota // an array, an object: held in vals, assigned
	kindString             // held in strs
	kindNumber             // held in nums
	kindTrue
	kindFalse
	kindNull
)

// newRowSlot is an empty slot with cells for width keys, whose map has its
// first group of entries allocated (a map made small allocates it at its
// first insertion).
func newRowSlot(width int) *rowSlot {
	m := make(map[string]any, 4)
	m[""] = nil
	clear(m) // keeps the group
	s := &rowSlot{m: m}
	s.grow(width)
	return s
}

// grow makes room for n keys; the cells move, so every value is boxed
// again and the map must be rebuilt.
func (s *rowSlot) grow(n int) {
	if n <= len(s.keys) {
		return
	}
	c := max(8, 2*n)
	keys, kinds, vals := make([]string, c), make([]kind, c), make([]any, c)
	strs, nums := make([]string, c), make([]float64, c)
	copy(keys, s.keys)
	copy(kinds, s.kinds)
	copy(vals, s.vals)
	copy(strs, s.strs)
	copy(nums, s.nums)
	for i, k := range kinds[:len(s.keys)] {
		switch k {
		case kindString:
			vals[i] = box(stringType, unsafe.Pointer(&strs[i]))
		case kindNumber:
			vals[i] = box(float64Type, unsafe.Pointer(&nums[i]))
		}
	}
	s.keys, s.kinds, s.vals, s.strs, s.nums = keys, kinds, vals, strs, nums
	s.n = -1
}

// row decodes the object at p (at its '{') into s and returns s's map.
func (p *jsonParser) row(s *rowSlot, depth int) (any, error) {
	v, err := p.rowFields(s, depth)
	if err != nil {
		s.n = -1 // half written: rebuilt by the next row
	}
	return v, err
}

func (p *jsonParser) rowFields(s *rowSlot, depth int) (any, error) {
	p.i++ // {
	same, n := s.n >= 0, 0
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return s.finish(0, same), nil
	}
	for ; ; n++ {
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, errJSON
		}
		kb, err := p.str()
		if err != nil {
			return nil, err
		}
		key := p.d.rowKey(n, kb)
		p.d.width = max(p.d.width, n+1)
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, errJSON
		}
		p.i++
		p.skipSpace()
		if n >= len(s.keys) {
			s.grow(n + 1)
			same = false
		}
		same = same && n < s.n && s.keys[n] == key
		s.keys[n] = key
		if same, err = p.cell(s, n, depth+1, same); err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, errJSON
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			continue
		case '}':
			p.i++
			return s.finish(n+1, same), nil
		}
		return nil, errJSON
	}
}

// cell decodes the value of s's key n; same says whether the map still
// holds the slot's values as they were, and is returned false when this
// one changed kind.
func (p *jsonParser) cell(s *rowSlot, n, depth int, same bool) (bool, error) {
	if p.i >= len(p.s) || depth > maxDepth {
		return false, errJSON
	}
	var k kind
	switch c := p.s[p.i]; {
	case c == '"':
		b, err := p.str()
		if err != nil {
			return false, err
		}
		s.strs[n] = p.d.vals.bytes(b)
		k = kindString
	case c == '-' || c >= '0' && c <= '9':
		f, err := p.number()
		if err != nil {
			return false, err
		}
		s.nums[n] = f
		k = kindNumber
	case c == 't':
		k = kindTrue
		if err := p.literal("true"); err != nil {
			return false, err
		}
	case c == 'f':
		k = kindFalse
		if err := p.literal("false"); err != nil {
			return false, err
		}
	case c == 'n':
		k = kindNull
		if err := p.literal("null"); err != nil {
			return false, err
		}
	default:
		v, err := p.value(nil, depth)
		if err != nil {
			return false, err
		}
		// A new value the map must hold: the map is rebuilt (assigning
		// it here could put it under a key the row repeats later).
		s.kinds[n], s.vals[n] = kindOther, v
		return false, nil
	}
	if same && s.kinds[n] == k && k != kindOther {
		return true, nil // the map refers to the cell, or to the same constant
	}
	s.kinds[n] = k
	switch k {
	case kindString:
		s.vals[n] = box(stringType, unsafe.Pointer(&s.strs[n]))
	case kindNumber:
		s.vals[n] = box(float64Type, unsafe.Pointer(&s.nums[n]))
	case kindTrue:
		s.vals[n] = true
	case kindFalse:
		s.vals[n] = false
	case kindNull:
		s.vals[n] = nil
	}
	return false, nil
}

// finish ends a row of n keys: the map is rebuilt unless it already holds
// exactly the row's keys, referring to its values.
func (s *rowSlot) finish(n int, same bool) any {
	if !same || n != s.n {
		clear(s.m)
		for i, k := range s.keys[:n] {
			s.m[k] = s.vals[i]
		}
		s.n = n
	}
	return s.m
}
