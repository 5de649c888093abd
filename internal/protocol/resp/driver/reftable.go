package resp

import (
	"bytes"

	wire "github.com/benchrig/benchrig/internal/resp"
)

// Bounds of the table of reference values (see Driver.buildReference): a
// key space or a set of values larger than this is looked up through
// Config.Reference on the hot path instead.
const (
	refTableMaxKeys  = 1 << 22
	refTableMaxBytes = 64 << 20
)

// refTable holds the Reference values of keys 1…len(end)-1 as an MGET reply
// carries them, one after the other: key id's element is enc[end[id-1]:end[id]],
// "$<len>\r\n<value>\r\n", or "$-1\r\n" when Reference has no value for it.
// Validating a value is then an index and a comparison instead of a call and
// a map lookup, and a whole reply of consecutive keys can be compared with
// the table in one piece (match).
type refTable struct {
	enc  []byte
	end  []uint32 // end[0] = 0
	val  []uint32 // where key id's value starts in enc
	miss []bool   // Reference has no value for key id
	hits []uint32 // hits[id] = keys among 1…id that have a value; hits[0] = 0
}

// buildReference asks Reference once for every key of the key space and
// keeps the answers in d.ref; it leaves d.ref empty when the key space is
// not 1…KeySpace (a workload's Keys) or the values are too many or too
// large, and the hot path then calls Reference.
func (d *Driver) buildReference() {
	if d.cfg.Reference == nil || d.cfg.ValidateSampled <= 0 || d.cfg.Keys != nil || d.cfg.KeySpace > refTableMaxKeys {
		return
	}
	n := d.cfg.KeySpace
	t := refTable{end: make([]uint32, 1, n+1), val: make([]uint32, n), miss: make([]bool, n), hits: make([]uint32, 1, n+1)}
	for id := int64(1); id <= n; id++ {
		v, ok := d.cfg.Reference(id)
		if len(t.enc)+len(v) > refTableMaxBytes || (id == 1024 && int64(len(t.enc))/1024*n > refTableMaxBytes) {
			return // too large, or on course to be
		}
		hits := t.hits[id-1]
		if ok {
			t.enc = wire.AppendBulk(t.enc, v)
			t.val[id-1] = uint32(len(t.enc) - 2 - len(v))
			hits++
		} else {
			t.enc = append(t.enc, "$-1\r\n"...)
			t.miss[id-1] = true
		}
		t.end = append(t.end, uint32(len(t.enc)))
		t.hits = append(t.hits, hits)
	}
	d.ref = t
}

// reference returns the value expected for key id, and false when the key
// should be missing.
func (d *Driver) reference(id int64) ([]byte, bool) {
	t := &d.ref
	switch {
	case id < 1 || id >= int64(len(t.end)):
		return d.cfg.Reference(id)
	case t.miss[id-1]:
		return nil, false
	}
	return t.enc[t.val[id-1] : t.end[id]-2], true
}

// match reports whether buf starts with the elements of the n keys id,
// id+1, … (1 after the last key) exactly as the table encodes them, and
// returns their size and how many of them have a value. A false answer
// says nothing about the values: the reply may be correct but not yet all
// buffered, or encoded otherwise; the caller then checks it value by value.
func (t *refTable) match(buf []byte, id int64, n int) (size, hits int, ok bool) {
	space := int64(len(t.end) - 1)
	if id < 1 || id > space {
		return 0, 0, false
	}
	for n > 0 {
		k := min(int64(n), space-id+1)
		seg := t.enc[t.end[id-1]:t.end[id+k-1]]
		if len(buf)-size < len(seg) || !bytes.Equal(buf[size:size+len(seg)], seg) {
			return 0, 0, false
		}
		size += len(seg)
		hits += int(t.hits[id+k-1] - t.hits[id-1])
		n -= int(k)
		id = 1
	}
	return size, hits, true
}

// firstKey returns the key number of the first key of request seq and
// whether the request's next keys follow it in order (1 after KeySpace):
// true for the default key source, whose keys are then numbered without a
// call and a division per key.
func (d *Driver) firstKey(seq uint64) (int64, bool) {
	if d.cfg.Keys != nil {
		return d.keys(seq, 0), false
	}
	return int64((seq*uint64(d.cfg.Batch))%uint64(d.cfg.KeySpace)) + 1, true
}
