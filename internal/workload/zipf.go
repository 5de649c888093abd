package workload

import "math"

// zipfSampler draws ranks 1 … n with P(k) ∝ k^−s for any s > 0, by
// Hörmann and Derflinger's rejection-inversion ("Rejection-inversion to
// generate variates from monotone discrete distributions", 1996), as in
// Apache Commons RNG's RejectionInversionZipfSampler. Unlike math/rand.Zipf
// it accepts s ≤ 1 (YCSB's 0.99) and takes its uniform numbers from the
// caller's per-operation generator. It is immutable once built.
type zipfSampler struct {
	n, s    float64
	hX1     float64 // hIntegral(1.5) − 1
	hN      float64 // hIntegral(n + 0.5)
	squeeze float64 // 2 − hIntegralInverse(hIntegral(2.5) − h(2))
	nInt    int64
}

// maxZipfTries bounds the rejection loop. The acceptance rate is above 90 %
// for every s, so the bound is never reached in practice; when it is, the
// last candidate is returned rather than looping on.
const maxZipfTries = 64

func newZipfSampler(n int64, s float64) zipfSampler {
	z := zipfSampler{n: float64(n), s: s, nInt: n}
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(z.n + 0.5)
	z.squeeze = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z
}

// sample returns a rank in 1 … n.
func (z *zipfSampler) sample(r *rng) int64 {
	var k int64 = 1
	for try := 0; try < maxZipfTries; try++ {
		// u is uniform in (hX1, hN].
		u := z.hN + r.float64()*(z.hX1-z.hN)
		x := z.hIntegralInverse(u)
		k = int64(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > z.nInt {
			k = z.nInt
		}
		kf := float64(k)
		if kf-x <= z.squeeze || u >= z.hIntegral(kf+0.5)-z.h(kf) {
			return k
		}
	}
	return k
}

// hIntegral is H(x) = ∫ h, with h(x) = x^−s: ((x^(1−s)) − 1) / (1 − s), or
// log x when s = 1, computed stably through helper2.
func (z *zipfSampler) hIntegral(x float64) float64 {
	logX := math.Log(x)
	return helper2((1-z.s)*logX) * logX
}

// h is x^−s.
func (z *zipfSampler) h(x float64) float64 {
	return math.Exp(-z.s * math.Log(x))
}

// hIntegralInverse is the inverse of hIntegral.
func (z *zipfSampler) hIntegralInverse(x float64) float64 {
	t := x * (1 - z.s)
	if t < -1 {
		t = -1 // numerical safety: t ≥ −1 holds mathematically
	}
	return math.Exp(helper1(t) * x)
}

// helper1 is log(1+x)/x, continuous at 0.
func helper1(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// helper2 is (exp(x)−1)/x, continuous at 0.
func helper2(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*(1.0/3)*(1+0.25*x))
}
