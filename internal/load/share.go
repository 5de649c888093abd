package load

import (
	"fmt"
	"math"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// MaxShares bounds how many ways one cell may be split (agents of a run).
const MaxShares = 1000

// Share is one agent's part of a plan cell split Count ways, the way k6's
// execution segments split a scenario: request i of the single-machine
// schedule (its sequence number, which also picks its keys) belongs to the
// share i mod Count, so the union of the shares is exactly the
// single-machine workload. At a constant rate each share sends every
// Count-th due time of the one schedule; with Poisson arrivals every
// Count-th arrival of the one seeded process: the merged arrival process is
// the single machine's. Connections are divided with the remainder going to
// the first shares (10 over 3: 4 + 3 + 3), and so is a request count
// (1,000 over 3: 334 + 333 + 333).
type Share struct {
	// Index is this share, 0 … Count−1.
	Index int `json:"index"`
	// Count is how many shares the cell is split into (1: the whole).
	Count int `json:"count"`
}

// Whole is the share of a run on one machine.
var Whole = Share{Index: 0, Count: 1}

// Validate checks the share's bounds.
func (s Share) Validate() error {
	if s.Count < 1 || s.Count > MaxShares {
		return fmt.Errorf("share count must be 1 to %d, got %d", MaxShares, s.Count)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("share index must be 0 to %d (count %d), got %d", s.Count-1, s.Count, s.Index)
	}
	return nil
}

// String is "2/3" (the third of three shares).
func (s Share) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// split is the share's part of n things: n/Count, plus one for the first
// n%Count shares.
func (s Share) split(n int64) int64 {
	q := n / int64(s.Count)
	if int64(s.Index) < n%int64(s.Count) {
		q++
	}
	return q
}

// Connections is the share's part of a cell's connections; an error when
// there are fewer connections than shares (a share without connections
// could send nothing).
func (s Share) Connections(total int) (int, error) {
	if total < s.Count {
		return 0, fmt.Errorf("%d connections cannot be split over %d agents: every agent needs at least one (give at least %d connections or fewer agents)", total, s.Count, s.Count)
	}
	return int(s.split(int64(total))), nil
}

// Requests is how many of the first total sequence numbers (0 … total−1)
// belong to the share: 1,000 over 3 is 334, 333, 333.
func (s Share) Requests(total int64) int64 {
	if total <= 0 {
		return 0
	}
	return s.split(total)
}

// Seq is the global sequence number of the share's j-th request.
func (s Share) Seq(j uint64) uint64 { return uint64(s.Index) + j*uint64(s.Count) }

// Owns reports whether global sequence number seq is the share's.
func (s Share) Owns(seq uint64) bool { return seq%uint64(s.Count) == uint64(s.Index) }

// Rate is the share's nominal part of a total rate: total ÷ Count. (The
// exact count of a window is what the shared schedule gives: Requests of
// the whole schedule's count.)
func (s Share) Rate(total float64) float64 { return total / float64(s.Count) }

// Config returns the engine configuration of the share: its connections,
// the whole rate (the schedule is the single machine's; the share keeps
// every Count-th due time of it), the same arrival process and seed, and a
// backlog bound divided like the connections.
func (s Share) Config(c Config) (Config, error) {
	if err := s.Validate(); err != nil {
		return c, err
	}
	n, err := s.Connections(c.Connections)
	if err != nil {
		return c, err
	}
	c.Connections = n
	if c.MaxBacklog > 0 {
		c.MaxBacklog = max(1, int(s.split(int64(c.MaxBacklog))))
	}
	if s.Count > 1 {
		sh := s
		c.Share = &sh
	} else {
		c.Share = nil
	}
	return c, nil
}

// sharePacer keeps every Count-th due time of the whole schedule's pacer,
// starting with the Index-th.
type sharePacer struct {
	inner    Pacer
	constant *ConstantPacer
	s        Share
	j        uint64
}

// SharePacer returns the pacer of share s over the whole schedule p: the
// due times of requests s.Index, s.Index+Count, …. A constant pacer is
// seeked directly; any other pacer is stepped Count times per request.
func SharePacer(p Pacer, s Share) Pacer {
	if s.Count <= 1 {
		return p
	}
	sp := &sharePacer{inner: p, s: s}
	if c, ok := p.(*ConstantPacer); ok {
		sp.constant = c
	}
	return sp
}

// Next implements Pacer.
func (p *sharePacer) Next() int64 {
	if p.constant != nil {
		d := p.constant.Due(p.s.Seq(p.j))
		p.j++
		return d
	}
	steps := p.s.Count
	if p.j == 0 {
		steps = p.s.Index + 1
	}
	p.j++
	var d int64
	for i := 0; i < steps; i++ {
		d = p.inner.Next()
	}
	return d
}

// seqOf maps the share's j-th request to its global sequence number (the
// identity without a share).
func (c *Config) seqOf(j uint64) uint64 {
	if c.Share == nil {
		return j
	}
	return c.Share.Seq(j)
}

// shareLimit is how many of a window's first limit sequence numbers are
// the engine's (limit 0: unbounded).
func (c *Config) shareLimit(limit uint64) uint64 {
	if c.Share == nil || limit == 0 || limit > math.MaxInt64 {
		return limit
	}
	return uint64(c.Share.Requests(int64(limit)))
}

// ownedBefore counts the share's sequence numbers in [from, to).
func (c *Config) ownedBefore(from, to uint64) uint64 {
	if to <= from {
		return 0
	}
	if c.Share == nil {
		return to - from
	}
	s := c.Share
	return uint64(s.Requests(int64(min(to, math.MaxInt64)))) - uint64(s.Requests(int64(min(from, math.MaxInt64))))
}

// SecondHistograms returns the per-second latency histograms of the last
// window Run measured, indexed like its timeline, each as its non-empty
// buckets: value, count, value, count, … (nil for a second without
// requests). Recording each value count times into a NewSecondHistogram
// restores the histogram exactly, without decoding a full one per second:
// a coordinator merges them to compute the merged timeline's per-second
// percentiles losslessly.
func (e *Engine) SecondHistograms() [][]int64 {
	e.lastMu.Lock()
	tl := e.lastTL
	e.lastMu.Unlock()
	if tl == nil {
		return nil
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	last := -1
	for s := range tl.secs {
		last = max(last, s)
	}
	out := make([][]int64, last+1)
	for s, a := range tl.secs {
		out[s] = SparseBuckets(a.hist)
	}
	return out
}

// SparseBuckets lists a histogram's non-empty buckets as value, count
// pairs (nil when it is empty).
func SparseBuckets(h *hdr.Histogram) []int64 {
	if h.TotalCount() == 0 {
		return nil
	}
	var out []int64
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			out = append(out, b.From, b.Count)
		}
	}
	return out
}

// NewSecondHistogram returns an empty per-second histogram, with the
// bounds the engine's timeline uses (2 significant digits).
func NewSecondHistogram() *hdr.Histogram { return newSecondHistogram() }

// lastWindow keeps the timeline of the last window for SecondHistograms.
type lastWindow struct {
	lastMu sync.Mutex
	lastTL *timeline
}

func (l *lastWindow) keep(tl *timeline) {
	l.lastMu.Lock()
	l.lastTL = tl
	l.lastMu.Unlock()
}
