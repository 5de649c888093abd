package resp

// Bounds of the table of reference values (see Driver.buildReference): a
// key space or a set of values larger than this is looked up through
// Config.Reference on the hot path instead.
const (
	refTableMaxKeys  = 1 << 22
	refTableMaxBytes = 64 << 20
)

// refTable holds the Reference values of keys 1…len(off)-1 in one buffer,
// so that validating a value is an index and a comparison instead of a call
// and a map lookup: key id's value is tab[off[id-1]:off[id]], and miss[id-1]
// says Reference had none for it.
type refTable struct {
	tab  []byte
	off  []uint32
	miss []bool
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
	t := refTable{off: make([]uint32, 1, n+1), miss: make([]bool, n)}
	for id := int64(1); id <= n; id++ {
		v, ok := d.cfg.Reference(id)
		if len(t.tab)+len(v) > refTableMaxBytes || (id == 1024 && int64(len(t.tab))/1024*n > refTableMaxBytes) {
			return // too large, or on course to be
		}
		t.tab = append(t.tab, v...)
		t.off = append(t.off, uint32(len(t.tab)))
		t.miss[id-1] = !ok
	}
	d.ref = t
}

// reference returns the value expected for key id, and false when the key
// should be missing.
func (d *Driver) reference(id int64) ([]byte, bool) {
	if id >= 1 && id < int64(len(d.ref.off)) {
		return d.ref.tab[d.ref.off[id-1]:d.ref.off[id]], !d.ref.miss[id-1]
	}
	return d.cfg.Reference(id)
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
