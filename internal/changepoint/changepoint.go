// Package changepoint finds where a benchmark series changed and whether
// its latest run regressed.
//
// A series is one figure of one cell (requests/s, p99 latency, server
// µs/request, peak memory) in time order, one value a run.
//
// Detect finds its change points with E-divisive means (Matteson &
// James 2014, "A Nonparametric Approach for Multiple Change Point
// Analysis of Multivariate Data"), the method Daly et al. (2020, "The
// Use of Change Point Detection to Identify Software Performance
// Regressions in a Continuous Integration System") run at MongoDB and
// that Hunter, now Apache Otava, took from MongoDB's signal processing
// algorithms:
//
//   - the energy divergence Q of a split, with alpha = 1, on the
//     univariate series; the right part reaches to the end of its
//     segment, as in MongoDB's code (ecp, the authors' R package, also
//     moves that end);
//   - bisection: the candidate is the split with the largest Q over
//     every segment that the change points found so far leave;
//   - a permutation test of each candidate, as in MongoDB's and ecp's:
//     the values shuffled within each segment, the largest Q over all
//     segments of each shuffle compared with the candidate's; the
//     p-value is ecp's (1 + over) ÷ (R + 1), never 0 (MongoDB's is
//     over ÷ (R + 1)); the shuffles are seeded;
//   - until a candidate is not significant.
//
// Hunter's first analysis ran exactly this test (p ≤ 0.01, 100
// permutations); later versions split the series into overlapping
// windows and test a candidate with Student's t test instead, which
// this package does not do. A minimum segment size is ecp's. Changes
// from those: a minimum of DefaultMinSize rather than ecp's 30, the
// divergence computed in O(n log n) without a distance matrix, and a
// permutation test that stops once its outcome is decided.
//
// Regressed is the gate of a new run against the runs since the last
// change point: a Mann–Whitney U test of the repeats and a threshold on
// the change of medians in the worse direction.
package changepoint

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Defaults and bounds of Options.
const (
	// DefaultAlpha is the significance level of the permutation test:
	// MongoDB's E-divisive and Hunter's first analysis use 0.01 (ecp
	// uses 0.05). A history is read again after every run, so a low
	// rate of false change points matters more than the earliest
	// detection of a small one.
	DefaultAlpha = 0.01
	// DefaultPermutations is the permutations of a candidate: the
	// R = 199 of ecp. With the p-value (1 + over) ÷ (R + 1), a candidate
	// passes the default alpha only when at most one of 199 shuffled
	// series splits as well as the series itself.
	DefaultPermutations = 199
	// MaxPermutations bounds Options.Permutations.
	MaxPermutations = 100_000
	// DefaultMinSize is the fewest runs on either side of a change
	// point: three runs make a level, while one or two slow runs are an
	// outlier, not a change. (ecp's default of 30 is for long series;
	// MongoDB's E-divisive has no minimum.)
	DefaultMinSize = 3
	// MaxPoints bounds the length of a series, and so Detect's cost
	// (see Detect): ten thousand runs are decades of nightly runs.
	MaxPoints = 10_000
	// MaxValues bounds each side of Regressed.
	MaxValues = 100_000
)

// Options tune Detect. Zero values take the defaults.
type Options struct {
	Alpha        float64 // significance level of the permutation test, in (0, 1); DefaultAlpha
	Permutations int     // permutations per candidate, at most MaxPermutations; DefaultPermutations
	MinSize      int     // fewest points in a segment, at least 2; DefaultMinSize
	Seed         uint64  // seeds the permutations and the bootstrap
}

// Point is one change point.
type Point struct {
	Index     int     // the first index of the new segment
	Before    float64 // median of the segment before
	After     float64 // median of the segment after
	ChangePct float64 // (After/Before − 1) × 100; 0 when Before is 0 or it overflows
	// Low and High bound ChangePct: the 2.5th and 97.5th percentiles of
	// its value over Resamples bootstrap resamples of both segments
	// (seeded by Options.Seed and Index).
	Low, High float64
	P         float64 // the permutation test's p-value, (1 + over) ÷ (R + 1)
}

// Resamples is the bootstrap resamples behind Point.Low and High.
const Resamples = 1000

// ErrInput wraps every error of bad input.
var ErrInput = errors.New("changepoint: bad input")

func (o Options) withDefaults(n int) (Options, error) {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return o, fmt.Errorf("%w: Options.Alpha %v: want a level in (0, 1)", ErrInput, o.Alpha)
	}
	if o.Permutations == 0 {
		o.Permutations = DefaultPermutations
	}
	if o.Permutations < 0 || o.Permutations > MaxPermutations {
		return o, fmt.Errorf("%w: Options.Permutations %d: want 1 to %d", ErrInput, o.Permutations, MaxPermutations)
	}
	if o.MinSize == 0 {
		o.MinSize = DefaultMinSize
	}
	if o.MinSize < 2 || o.MinSize > MaxPoints {
		return o, fmt.Errorf("%w: Options.MinSize %d: want 2 to %d", ErrInput, o.MinSize, MaxPoints)
	}
	if n > MaxPoints {
		return o, fmt.Errorf("%w: xs has %d points: want at most %d", ErrInput, n, MaxPoints)
	}
	return o, nil
}

// segment is [a, b) of the series with its best split, once found.
type segment struct {
	a, b  int
	r     ranked
	t     int // best split, relative to a
	q     float64
	ok    bool
	found bool
}

// Detect returns the change points of xs (time order), in index order.
//
// Cost: finding the best split of a segment of L points takes
// O(L log L) time and O(L) memory (running sums of distances over
// Fenwick trees of ranks), so one pass over the
// series — the search, or one permutation — is O(n log n). A candidate
// costs at most R + 1 passes; its test stops as soon as the count of
// shuffled series at least as split as the series decides it, which is
// early for a candidate that fails. With k change points found, Detect
// is O((k+1) · R · n log n) at worst and O(n) memory, plus
// O(Resamples · n) for the intervals. Measured at the defaults on a
// busy 2-core machine, a series with one change point takes 3 ms for
// 30 points, 40 ms for 1,000 and 2 s for MaxPoints; one with none
// takes 15 µs for 30, 0.5 ms for 1,000 and 25 ms for MaxPoints.
func Detect(xs []float64, o Options) ([]Point, error) {
	o, err := o.withDefaults(len(xs))
	if err != nil {
		return nil, err
	}
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: xs[%d] is %v: want finite values", ErrInput, i, x)
		}
	}
	norm, ok := normalize(xs)
	if !ok || len(xs) < 2*o.MinSize {
		return nil, nil // constant, or too short to split
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x6564697669736976)) // "edivisiv"
	sc := newScratch(len(xs))
	segs := []*segment{{a: 0, b: len(xs), r: rank(norm)}}
	var cps []Point
	for {
		best := -1
		for i, s := range segs {
			if !s.found {
				s.t, s.q, s.ok = sc.split(s.r, o.MinSize)
				s.found = true
			}
			if s.ok && (best < 0 || s.q > segs[best].q) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		p, pass := permutationTest(segs, segs[best].q, o, sc, rng)
		if !pass {
			break
		}
		s := segs[best]
		at := s.a + s.t
		left := &segment{a: s.a, b: at, r: rank(norm[s.a:at])}
		right := &segment{a: at, b: s.b, r: rank(norm[at:s.b])}
		segs = slices.Replace(segs, best, best+1, left, right)
		cps = append(cps, Point{Index: at, P: p})
	}
	slices.SortFunc(cps, func(a, b Point) int { return a.Index - b.Index })
	for i := range cps {
		from, to := 0, len(xs)
		if i > 0 {
			from = cps[i-1].Index
		}
		if i+1 < len(cps) {
			to = cps[i+1].Index
		}
		describe(&cps[i], xs[from:cps[i].Index], xs[cps[i].Index:to], o.Seed)
	}
	return cps, nil
}

// permutationTest shuffles the values within every segment, finds the
// best split of the shuffled series as of the series itself, and counts
// the shuffles whose best split is at least obs. The p-value is
// (1 + over) ÷ (R + 1) (ecp's; MongoDB's over ÷ (R + 1) can be 0). It
// stops once the count decides: pass is p ≤ alpha, and p is exact only
// when pass.
func permutationTest(segs []*segment, obs float64, o Options, sc *scratch, rng *rand.Rand) (p float64, pass bool) {
	R := o.Permutations
	// Ties of obs up to rounding count as at least obs (conservative).
	tol := 1e-12 * math.Abs(obs)
	// The most shuffles at least obs with which p ≤ alpha.
	maxOver := int(math.Floor(o.Alpha*float64(R+1)+1e-9)) - 1
	if maxOver < 0 {
		return 1, false
	}
	perm := make([]int, 0, len(sc.wx))
	over := 0
	for range R {
		top := math.Inf(-1)
		for _, s := range segs {
			n := len(s.r.vals)
			if n < 2*o.MinSize {
				continue
			}
			perm = perm[:n]
			for i := range perm {
				perm[i] = i
			}
			rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
			sh := sc.shuffled(s.r, perm)
			if _, q, ok := sc.split(sh, o.MinSize); ok && q > top {
				top = q
			}
		}
		if top >= obs-tol {
			over++
			if over > maxOver {
				return float64(1+over) / float64(R+1), false
			}
		}
	}
	return float64(1+over) / float64(R+1), true
}

// shuffled is r in the order perm, ranks kept, in sc's memory.
func (sc *scratch) shuffled(r ranked, perm []int) ranked {
	s := ranked{vals: sc.sh.vals[:len(perm)], ranks: sc.sh.ranks[:len(perm)], nr: r.nr}
	for i, j := range perm {
		s.vals[i], s.ranks[i] = r.vals[j], r.ranks[j]
	}
	return s
}

// normalize maps xs onto [−1, 1] (the divergence is shift-invariant and
// scales with the values, so the test is unchanged) to keep the sums of
// distances finite and exact enough for any finite input; false when xs
// is constant or empty.
func normalize(xs []float64) ([]float64, bool) {
	if len(xs) == 0 {
		return nil, false
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	mid, half := lo/2+hi/2, hi/2-lo/2
	if !(half > 0) {
		return nil, false
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = min(1, max(-1, (x/2-mid/2)/half*2))
	}
	return out, true
}
