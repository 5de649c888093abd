package workload

import "math/bits"

// Op is the class of one operation.
type Op uint8

// Operation classes.
const (
	Read  Op = iota // read Batch rows
	Write           // update one row
)

func (o Op) String() string {
	switch o {
	case Read:
		return "read"
	case Write:
		return "write"
	}
	return "unknown"
}

// Workload is a validated, immutable key sequence. It is safe for concurrent
// use by any number of workers.
type Workload struct {
	cfg   Config
	hot   uint64
	rows  uint64
	batch int
	every uint64
	zipf  zipfSampler
}

// New validates cfg (after applying defaults) and returns its workload.
func New(cfg Config) (*Workload, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &Workload{
		cfg:   cfg,
		hot:   uint64(cfg.Hot),
		rows:  uint64(cfg.Rows),
		batch: cfg.Batch,
		every: uint64(cfg.WriteEvery),
	}
	if cfg.Kind == Zipf {
		w.zipf = newZipfSampler(cfg.Rows, cfg.ZipfS)
	}
	return w, nil
}

// Config returns the resolved configuration, defaults applied.
func (w *Workload) Config() Config { return w.cfg }

// Kind returns the workload's kind.
func (w *Workload) Kind() Kind { return w.cfg.Kind }

// Batch returns the number of keys a read request reads: the capacity a
// caller's key buffer needs so that Keys never allocates.
func (w *Workload) Batch() int { return w.batch }

// Rows returns the number of rows the keys range over (1 … Rows).
func (w *Workload) Rows() int64 { return w.cfg.Rows }

// Requests returns the natural number of requests of one sample: for cold,
// ceil(Rows / Batch), after which every row has been read exactly once; 0
// (unbounded) for every other kind.
func (w *Workload) Requests() int64 {
	if w.cfg.Kind != Cold {
		return 0
	}
	return (w.cfg.Rows + int64(w.batch) - 1) / int64(w.batch)
}

// Ops names the operation classes the workload issues, in the order of
// Index: ["read"], ["write"] or, for mixed, ["read", "write"].
func (w *Workload) Ops() []string {
	switch w.cfg.Kind {
	case Mixed:
		return []string{Read.String(), Write.String()}
	case Writes:
		return []string{Write.String()}
	}
	return []string{Read.String()}
}

// Index returns the position of op in Ops(), for a driver's Outcome.Op.
func (w *Workload) Index(op Op) uint8 {
	if op == Write && w.cfg.Kind == Mixed {
		return 1
	}
	return 0
}

// Op returns the class of operation seq without computing its keys.
func (w *Workload) Op(seq uint64) Op {
	switch w.cfg.Kind {
	case Writes:
		return Write
	case Mixed:
		// seq % 20 == 19 with the default: operations 19, 39, 59, … write.
		if seq%w.every == w.every-1 {
			return Write
		}
	}
	return Read
}

// Keys returns the class of operation seq and its keys, appended to dst[:0].
// It does not allocate when cap(dst) ≥ Batch(). A read has Batch keys (a cold
// workload's last request fewer, and none past Requests()); a write has one.
func (w *Workload) Keys(seq uint64, dst []int64) (op Op, keys []int64) {
	keys = dst[:0]
	op = w.Op(seq)
	if op == Write {
		return Write, append(keys, w.writeKey(seq))
	}
	switch w.cfg.Kind {
	case Hot, Mixed:
		return Read, w.hotKeys(seq, keys)
	case Cold:
		return Read, w.coldKeys(seq, keys)
	case Uniform:
		return Read, w.uniformKeys(seq, keys)
	case Zipf:
		return Read, w.zipfKeys(seq, keys)
	}
	return Read, keys
}

// writeKey is (seq·17) % Hot + 1, computed without overflow.
func (w *Workload) writeKey(seq uint64) int64 {
	return int64((seq%w.hot)*WriteStride%w.hot + 1)
}

// hotKeys appends (seq·k + i) % Hot + 1 for i in 0 … k−1.
func (w *Workload) hotKeys(seq uint64, keys []int64) []int64 {
	h := w.hot
	k := uint64(w.batch)
	cur := (seq % h) * (k % h) % h // (seq·k) % h without overflow
	for i := 0; i < w.batch; i++ {
		keys = append(keys, int64(cur+1))
		if cur++; cur == h {
			cur = 0
		}
	}
	return keys
}

// coldKeys appends seq·k + i + 1 for i in 0 … k−1, stopping after Rows.
func (w *Workload) coldKeys(seq uint64, keys []int64) []int64 {
	k := uint64(w.batch)
	if seq >= w.rows/k+1 { // past the end; also keeps seq·k from overflowing
		return keys
	}
	first := seq * k
	for i := uint64(0); i < k && first+i < w.rows; i++ {
		keys = append(keys, int64(first+i+1))
	}
	return keys
}

// uniformKeys appends Batch keys drawn uniformly from 1 … Rows.
func (w *Workload) uniformKeys(seq uint64, keys []int64) []int64 {
	r := newRNG(w.cfg.Seed, seq)
	for i := 0; i < w.batch; i++ {
		hi, _ := bits.Mul64(r.next(), w.rows) // Lemire: ⌊x·rows / 2⁶⁴⌋
		keys = append(keys, int64(hi+1))
	}
	return keys
}

// zipfKeys appends Batch Zipf-distributed keys (key = rank, 1 hottest).
func (w *Workload) zipfKeys(seq uint64, keys []int64) []int64 {
	r := newRNG(w.cfg.Seed, seq)
	for i := 0; i < w.batch; i++ {
		keys = append(keys, w.zipf.sample(&r))
	}
	return keys
}
