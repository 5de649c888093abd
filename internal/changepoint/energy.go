package changepoint

import (
	"math"
	"slices"
)

// The divergence of Matteson & James (2014) with alpha = 1, for a split
// of a segment v into X = v[:t] and Y = v[t:] (sizes m and k):
//
//	E(X, Y) = 2/(m·k) Σ|x−y| − 2/(m(m−1)) Σ_{i<j}|xi−xj| − 2/(k(k−1)) Σ_{i<j}|yi−yj|
//	Q(t)    = m·k/(m+k) · E(X, Y)
//
// As in the E-divisive implementation of MongoDB's signal processing
// algorithms (which Hunter, now Apache Otava, runs), Y reaches to the
// end of the segment; the R package ecp also searches the end of Y, a
// refinement left out here. The series is univariate, so the three sums
// are found for every t in O(L log L) time and O(L) memory, without an
// L×L matrix of distances: W(v[:t]) grows by one value at a time, each
// insertion adding that value's distances to the values already in,
// which two Fenwick trees over the values' ranks (a count and a sum)
// give in O(log L); W(v[t:]) likewise from the right; and the cross sum
// is W(v) − W(v[:t]) − W(v[t:]).

// ranked is a segment's values with their ranks among its distinct
// values (0 for the smallest), so that a permutation of the segment
// needs no new sort.
type ranked struct {
	vals  []float64
	ranks []int
	nr    int // distinct values
}

// rank ranks v; a copy of v is kept.
func rank(v []float64) ranked {
	r := ranked{vals: slices.Clone(v), ranks: make([]int, len(v))}
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case v[a] < v[b]:
			return -1
		case v[a] > v[b]:
			return 1
		}
		return 0
	})
	for i, j := range idx {
		if i > 0 && v[j] != v[idx[i-1]] {
			r.nr++
		}
		r.ranks[j] = r.nr
	}
	if len(v) > 0 {
		r.nr++
	}
	return r
}

// scratch is reused memory for split, sized for the longest segment.
type scratch struct {
	cnt, sum []float64 // Fenwick trees over ranks
	eq       []float64 // values in so far of each rank
	wx, wy   []float64 // W of v[:t] and of v[t:], t = 0..L
	sh       ranked    // a shuffled segment
}

func newScratch(n int) *scratch {
	f := func() []float64 { return make([]float64, n+1) }
	return &scratch{cnt: f(), sum: f(), eq: f(), wx: f(), wy: f(),
		sh: ranked{vals: make([]float64, n), ranks: make([]int, n)}}
}

// within fills w[t] with the sum of pairwise distances of the first t
// values of r (w[0] = 0), or of the last t when fromRight.
func (s *scratch) within(r ranked, fromRight bool, w []float64) {
	cnt, sum, eq := s.cnt[:r.nr+1], s.sum[:r.nr+1], s.eq[:r.nr]
	clear(cnt)
	clear(sum)
	clear(eq)
	var totC, totS float64
	w[0] = 0
	L := len(r.vals)
	for i := range L {
		j := i
		if fromRight {
			j = L - 1 - i
		}
		x, k := r.vals[j], r.ranks[j]
		// Values ranked below k: the prefix up to rank k−1 (tree index
		// k). Those ranked k are at distance 0; the rest are above.
		var bc, bs float64
		for q := k; q > 0; q -= q & -q {
			bc += cnt[q]
			bs += sum[q]
		}
		ac, as := totC-bc-eq[k], totS-bs-eq[k]*x
		w[i+1] = w[i] + (x*bc - bs) + (as - x*ac)
		for q := k + 1; q < len(cnt); q += q & -q {
			cnt[q]++
			sum[q] += x
		}
		eq[k]++
		totC++
		totS += x
	}
}

// split returns the t in [minSize, L−minSize] that maximises Q(t) over
// the segment r, and that Q; ok is false when the segment is shorter
// than 2·minSize. minSize is at least 2.
func (s *scratch) split(r ranked, minSize int) (t int, q float64, ok bool) {
	L := len(r.vals)
	if L < 2*minSize {
		return 0, 0, false
	}
	wx, wy := s.wx[:L+1], s.wy[:L+1]
	s.within(r, false, wx)
	// within writes W(v[L−i:]) at index i; split wants it at L−i.
	s.within(r, true, wy)
	slices.Reverse(wy)
	all := wx[L]
	q = math.Inf(-1)
	for c := minSize; c <= L-minSize; c++ {
		m, k := float64(c), float64(L-c)
		cross := all - wx[c] - wy[c]
		e := 2*cross/(m*k) - 2*wx[c]/(m*(m-1)) - 2*wy[c]/(k*(k-1))
		if v := m * k / (m + k) * e; v > q {
			t, q = c, v
		}
	}
	return t, q, true
}
