package load

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
)

// A Pacer says when each request of a constant-rate window is due, as an
// offset in nanoseconds from the window's start. It is pure: the engine sleeps,
// the pacer only computes. Due times are absolute (request i never depends on
// when request i-1 was actually sent), so a slow send never shifts the
// schedule.
type Pacer interface {
	// Next returns the due offset of the next request, in nanoseconds.
	Next() int64
}

// Bounds of a constant or Poisson arrival rate, in requests per second.
const (
	// MinRate is the pacer's resolution: rates are held as requests per
	// 1000 s, so 0.001 req/s (one request every 1000 s) is the least that
	// is not zero.
	MinRate = 0.001
	// MaxRate is ten million requests per second. One dispatcher goroutine
	// hands out every due request (a clock read, a queue push and a
	// counter per request, a few hundred nanoseconds on one core), so it
	// cannot schedule much more on any machine, nor can a loopback server
	// answer it; a higher rate would only measure the dispatcher falling
	// behind. The default backlog (rate × 1 s) is capped separately (see
	// MaxBacklog).
	MaxRate = 1e7
)

// ValidateRate checks an arrival rate against MinRate and MaxRate; the
// error states the accepted range.
func ValidateRate(rate float64) error {
	if math.IsNaN(rate) || rate < MinRate || rate > MaxRate {
		return fmt.Errorf("rate %v requests per second is out of range: want %v ≤ rate ≤ %v (10⁷)", rate, MinRate, MaxRate)
	}
	if math.Round(rate*1000) == 0 {
		return fmt.Errorf("rate %v is below the resolution of %v requests per second", rate, MinRate)
	}
	return nil
}

// ConstantPacer schedules request i at exactly i/rate seconds, in integer
// nanoseconds: the rate is held as a count of requests per 1000 seconds so
// fractional rates (2.5 req/s) stay exact and there is no accumulated
// floating-point drift however long the run.
type ConstantPacer struct {
	perKilosecond uint64 // requests per 1000 s
	i             uint64
}

// NewConstantPacer returns a pacer for rate requests per second
// (ValidateRate's range). Rates are rounded to the nearest 1/1000 request
// per second.
func NewConstantPacer(rate float64) (*ConstantPacer, error) {
	if err := ValidateRate(rate); err != nil {
		return nil, err
	}
	return &ConstantPacer{perKilosecond: uint64(math.Round(rate * 1000))}, nil
}

// CountBefore returns how many requests are due before offset d (ns): the
// i with Due(i) < d.
func (p *ConstantPacer) CountBefore(d int64) uint64 {
	if d <= 0 {
		return 0
	}
	// Due(i) < d  ⇔  i × 10¹² < d × pk (Due is floored)  ⇔  i < ⌈d × pk / 10¹²⌉.
	hi, lo := bits.Mul64(uint64(d), p.perKilosecond)
	const tera = 1_000_000_000_000
	if hi >= tera {
		return math.MaxUint64
	}
	q, r := bits.Div64(hi, lo, tera)
	if r != 0 {
		q++
	}
	return q
}

// Due returns the due offset of request i: floor(i × 10¹² ÷ perKilosecond) ns.
func (p *ConstantPacer) Due(i uint64) int64 {
	hi, lo := bits.Mul64(i, 1_000_000_000_000)
	if hi >= p.perKilosecond { // would overflow: beyond ~292 years
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, p.perKilosecond)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// Next implements Pacer.
func (p *ConstantPacer) Next() int64 {
	d := p.Due(p.i)
	p.i++
	return d
}

// PoissonPacer schedules requests as a Poisson process: exponential gaps with
// mean 1/rate, from a seeded generator so a run is reproducible. Offsets are
// accumulated in integer nanoseconds.
type PoissonPacer struct {
	meanNS float64
	rng    *rand.Rand
	at     int64
}

// NewPoissonPacer returns a seeded Poisson pacer for rate requests per
// second (ValidateRate's range).
func NewPoissonPacer(rate float64, seed uint64) (*PoissonPacer, error) {
	if err := ValidateRate(rate); err != nil {
		return nil, err
	}
	return &PoissonPacer{meanNS: 1e9 / rate, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}, nil
}

// Next implements Pacer. The first request is due at 0.
func (p *PoissonPacer) Next() int64 {
	d := p.at
	p.at += int64(p.rng.ExpFloat64() * p.meanNS)
	return d
}

var (
	_ Pacer = (*ConstantPacer)(nil)
	_ Pacer = (*PoissonPacer)(nil)
)
