package changepoint

import (
	"math"
	"math/rand/v2"
	"slices"
)

// describe fills p's medians, change and its bootstrap interval from the
// segments before and after it.
func describe(p *Point, before, after []float64, seed uint64) {
	buf := make([]float64, max(len(before), len(after)))
	p.Before = median(before, buf)
	p.After = median(after, buf)
	p.ChangePct = changePct(p.Before, p.After)
	p.Low, p.High = bootstrap(before, after, seed^uint64(p.Index), buf)
}

// changePct is (after ÷ before − 1) × 100, 0 when before is 0 or the
// ratio overflows.
func changePct(before, after float64) float64 {
	c := (after/before - 1) * 100
	if before == 0 || math.IsInf(c, 0) {
		return 0
	}
	return c
}

// bootstrap is the percentile interval, 95 %, of changePct over
// Resamples resamples (with replacement) of before and of after;
// resamples whose before median is 0 are left out, and (0, 0) is
// returned when all are.
func bootstrap(before, after []float64, seed uint64, buf []float64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(seed, 0x626f6f7473747270)) // "bootstrp"
	pcts := make([]float64, 0, Resamples)
	draw := func(v []float64) float64 {
		b := buf[:len(v)]
		for i := range b {
			b[i] = v[rng.IntN(len(v))]
		}
		return median(b, b)
	}
	for range Resamples {
		mb := draw(before)
		ma := draw(after)
		if mb != 0 {
			pcts = append(pcts, changePct(mb, ma))
		}
	}
	if len(pcts) == 0 {
		return 0, 0
	}
	slices.Sort(pcts)
	n := float64(len(pcts))
	return pcts[int(math.Floor(0.025*(n-1)))], pcts[int(math.Ceil(0.975*(n-1)))]
}

// median is the median of v, using buf (at least len(v) long, may be v
// itself) as scratch; NaN for no values. It selects in O(len(v)).
func median(v, buf []float64) float64 {
	n := len(v)
	if n == 0 {
		return math.NaN()
	}
	b := buf[:n]
	copy(b, v)
	m := selectKth(b, n/2)
	if n%2 == 1 {
		return m
	}
	// The lower middle is the largest of the values left of n/2; halves
	// first, so that two huge values do not overflow.
	return slices.Max(b[:n/2])/2 + m/2
}

// selectKth reorders v so that v[k] is the k-th smallest, v[:k] at most
// it and v[k+1:] at least it, and returns v[k] (Hoare's selection with
// the middle of three as pivot).
func selectKth(v []float64, k int) float64 {
	lo, hi := 0, len(v)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if v[mid] < v[lo] {
			v[mid], v[lo] = v[lo], v[mid]
		}
		if v[hi] < v[lo] {
			v[hi], v[lo] = v[lo], v[hi]
		}
		if v[hi] < v[mid] {
			v[hi], v[mid] = v[mid], v[hi]
		}
		pivot := v[mid]
		i, j := lo, hi
		for i <= j {
			for v[i] < pivot {
				i++
			}
			for v[j] > pivot {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return v[k]
		}
	}
	return v[k]
}
