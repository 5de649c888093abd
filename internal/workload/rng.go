package workload

// golden is 2⁶⁴/φ, splitmix64's increment.
const golden = 0x9e3779b97f4a7c15

// rng is a splitmix64 generator whose state is derived from (seed, seq), so
// that the keys of an operation depend on nothing but its sequence number:
// no generator is shared between workers, and no order of calls matters.
type rng struct{ state uint64 }

// newRNG returns the generator of operation seq under seed.
func newRNG(seed, seq uint64) rng {
	return rng{state: mix64(seq ^ mix64(seed+golden))}
}

// next returns the next 64 uniformly distributed bits.
func (r *rng) next() uint64 {
	r.state += golden
	return mix64(r.state)
}

// float64 returns a uniform value in [0, 1).
func (r *rng) float64() float64 {
	return float64(r.next()>>11) * (1.0 / (1 << 53))
}

// mix64 is splitmix64's output function (Stafford's variant 13), a bijection
// of 64-bit values with good avalanche.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
