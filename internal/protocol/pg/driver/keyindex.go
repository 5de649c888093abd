package pg

// keyIndex finds the positions of a request's keys, for the any path to put
// each row it reads at every position of its key as the row arrives: an
// open-addressing table over the keys, rebuilt per request in arrays the
// connection reuses, so that placing a row is a multiplication and a
// comparison or two instead of a map insertion and, per key, a lookup.
type keyIndex struct {
	keys  []int64 // the request's keys
	table []int32 // 1 + the first position of the key hashed there; 0: empty
	next  []int32 // 1 + the next position of the same key; 0: none
	shift uint    // 64 - log2(len(table))
}

// build indexes keys (kept, not copied, until the next build).
func (x *keyIndex) build(keys []int64) {
	size, bits := 8, uint(3)
	for size < 2*len(keys) {
		size, bits = size*2, bits+1
	}
	if cap(x.table) < size {
		x.table = make([]int32, size)
	}
	x.table = x.table[:size]
	clear(x.table)
	x.next = x.next[:0]
	x.keys, x.shift = keys, 64-bits
	mask := size - 1
	for i, k := range keys {
		x.next = append(x.next, 0)
		h := x.hash(k)
		for {
			f := x.table[h]
			if f == 0 {
				x.table[h] = int32(i + 1)
				break
			}
			if keys[f-1] == k {
				// A duplicate: chained after the key's first position.
				x.next[i], x.next[f-1] = x.next[f-1], int32(i+1)
				break
			}
			h = (h + 1) & mask
		}
	}
}

// hash is the table slot at which k's probe starts (Fibonacci hashing).
func (x *keyIndex) hash(k int64) int { return int(uint64(k) * 0x9e3779b97f4a7c15 >> x.shift) }

// place sets rows[i] = v at every position i of key k; false when k is not
// one of the keys.
func (x *keyIndex) place(rows []any, k int64, v any) bool {
	mask := len(x.table) - 1
	for h := x.hash(k); ; h = (h + 1) & mask {
		f := x.table[h]
		if f == 0 {
			return false
		}
		if x.keys[f-1] != k {
			continue
		}
		for i := f; i != 0; i = x.next[i-1] {
			rows[i-1] = v
		}
		return true
	}
}
