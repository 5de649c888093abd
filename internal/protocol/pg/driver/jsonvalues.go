package pg

import (
	"math"
	"unsafe"
)

// The decoder's scalar values live in per-connection slabs, reused from one
// request to the next, so that decoding a row allocates nothing once the
// slabs have grown: a string's bytes are copied into text and its header
// kept in strs, a number kept in nums, and the any that holds each refers
// to its slab element instead of a copy on the heap (what converting a
// string or a float64 to an interface allocates).
//
// This is what the rows' documented lifetime allows: the rows of a request
// are valid until the connection's next request, whose reset makes the
// slabs' elements free to be overwritten. A slab that grows during a
// request leaves the values already handed out in the old array, which
// nothing overwrites again.
type values struct {
	text []byte    // the bytes of the request's strings
	strs []string  // their headers
	nums []float64 // the request's numbers
}

// reset frees the slabs for the next request: the values handed out so far
// may be overwritten from here on. A slab is kept at least twice as large
// as the last request needed (and no smaller than a floor), doubling, so
// that requests that vary in their number of values (rows present or not,
// a column now NULL and now not) do not grow it request after request.
func (v *values) reset() {
	v.text = headroom(v.text, 8192)
	v.strs = headroom(v.strs, 64)
	v.nums = headroom(v.nums, 64)
}

// headroom empties s, first replaced by a larger slab when what the last
// request put in it (len(s)) is more than half its capacity or the floor.
func headroom[T any](s []T, floor int) []T {
	c := max(cap(s), floor)
	for 2*len(s) > c {
		c *= 2
	}
	if c != cap(s) {
		return make([]T, 0, c)
	}
	return s[:0]
}

// str returns b as a string held in the slabs.
func (v *values) str(b []byte) any {
	if len(b) == 0 {
		return ""
	}
	v.strs = append(v.strs, v.bytes(b))
	return box(stringType, unsafe.Pointer(&v.strs[len(v.strs)-1]))
}

// bytes returns a string of b's bytes copied into the text slab.
func (v *values) bytes(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(v.text)-len(v.text) < len(b) {
		// A new array: the strings made so far keep the old one.
		v.text = make([]byte, 0, max(2*cap(v.text), len(b), 4096))
	}
	off := len(v.text)
	v.text = append(v.text, b...)
	return unsafe.String(&v.text[off], len(b))
}

// num returns f as a float64 held in the slabs.
func (v *values) num(f float64) any {
	if f == 0 && !math.Signbit(f) {
		return float64(0) // +0 is boxed without allocating
	}
	v.nums = append(v.nums, f)
	return box(float64Type, unsafe.Pointer(&v.nums[len(v.nums)-1]))
}

// eface is the layout of an empty interface: its dynamic type, and a
// pointer to its value for a type that is not pointer-shaped.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

var (
	stringType  = typeOf("")
	float64Type = typeOf(float64(0))
)

// typeOf is the dynamic type word of x.
func typeOf(x any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&x)).typ }

// box is the interface value of dynamic type typ whose value is at p, as
// converting *p to any would give, without copying *p to the heap.
func box(typ, p unsafe.Pointer) any {
	var x any
	e := (*eface)(unsafe.Pointer(&x))
	e.typ, e.data = typ, p
	return x
}
