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

// ConstantPacer schedules request i at exactly i/rate seconds, in integer
// nanoseconds: the rate is held as a count of requests per 1000 seconds so
// fractional rates (2.5 req/s) stay exact and there is no accumulated
// floating-point drift however long the run.
type ConstantPacer struct {
	perKilosecond uint64 // requests per 1000 s
	i             uint64
}

// NewConstantPacer returns a pacer for rate requests per second. Rates are
// rounded to the nearest 1/1000 request per second.
func NewConstantPacer(rate float64) (*ConstantPacer, error) {
	if !(rate > 0) || math.IsInf(rate, 0) || rate > 1e9 {
		return nil, fmt.Errorf("rate must be a number > 0 and ≤ 1e9 requests per second, got %v", rate)
	}
	pk := uint64(math.Round(rate * 1000))
	if pk == 0 {
		return nil, fmt.Errorf("rate %v is below the resolution of 0.001 requests per second", rate)
	}
	return &ConstantPacer{perKilosecond: pk}, nil
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

// NewPoissonPacer returns a seeded Poisson pacer for rate requests per second.
func NewPoissonPacer(rate float64, seed uint64) (*PoissonPacer, error) {
	if !(rate > 0) || math.IsInf(rate, 0) || rate > 1e9 {
		return nil, fmt.Errorf("rate must be a number > 0 and ≤ 1e9 requests per second, got %v", rate)
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
