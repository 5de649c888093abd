package changepoint

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// bruteQ is Q(t) of v straight from the definition, O(L²) a split.
func bruteQ(v []float64, t int) float64 {
	x, y := v[:t], v[t:]
	m, k := float64(len(x)), float64(len(y))
	var cross, wx, wy float64
	for _, a := range x {
		for _, b := range y {
			cross += math.Abs(a - b)
		}
	}
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			wx += math.Abs(x[i] - x[j])
		}
	}
	for i := range y {
		for j := i + 1; j < len(y); j++ {
			wy += math.Abs(y[i] - y[j])
		}
	}
	e := 2*cross/(m*k) - 2*wx/(m*(m-1)) - 2*wy/(k*(k-1))
	return m * k / (m + k) * e
}

func TestSplitMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 4 + rng.IntN(40)
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(rng.IntN(6)) // many ties
			if trial%2 == 1 {
				v[i] = rng.NormFloat64() + float64(i/(n/2+1))
			}
		}
		minSize := 2 + rng.IntN(n/2-1)
		bestT, bestQ := 0, math.Inf(-1)
		for c := minSize; c <= n-minSize; c++ {
			if q := bruteQ(v, c); q > bestQ+1e-9 {
				bestT, bestQ = c, q
			}
		}
		gotT, gotQ, ok := newScratch(n).split(rank(v), minSize)
		if !ok || math.Abs(gotQ-bestQ) > 1e-9*max(1, math.Abs(bestQ)) || math.Abs(bruteQ(v, gotT)-bestQ) > 1e-9*max(1, math.Abs(bestQ)) {
			t.Fatalf("split(%v, %d) = %d, %v, %v; the definition's best is %d, %v", v, minSize, gotT, gotQ, ok, bestT, bestQ)
		}
	}
	if _, _, ok := newScratch(5).split(rank([]float64{1, 2, 3, 4, 5}), 3); ok {
		t.Error("split of 5 points with minSize 3 is ok; want no split")
	}
}

func TestMedianSelects(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		v := make([]float64, 1+rng.IntN(30))
		for i := range v {
			v[i] = float64(rng.IntN(8))
		}
		s := slices.Clone(v)
		slices.Sort(s)
		want := (s[(len(s)-1)/2] + s[len(s)/2]) / 2
		if got := median(v, make([]float64, len(v))); got != want {
			t.Fatalf("median(%v) = %v, want %v", v, got, want)
		}
	}
	if !math.IsNaN(median(nil, nil)) {
		t.Error("median of nothing is not NaN")
	}
	if big := []float64{math.MaxFloat64, math.MaxFloat64}; median(big, big) != math.MaxFloat64 {
		t.Errorf("median(%v) = %v; want no overflow", big, median(big, big))
	}
	if c := changePct(1e-300, 1e300); c != 0 {
		t.Errorf("changePct(1e-300, 1e300) = %v; want 0 for an overflow", c)
	}
}

func TestDetectFindsStep(t *testing.T) {
	for _, step := range []float64{0.10, -0.10} {
		for seed := range uint64(20) {
			xs := medians(benchSeries(seed, step).values())
			cps, err := Detect(xs, Options{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(cps, func(p Point) bool { return p.Index >= 19 && p.Index <= 21 })
			if i < 0 {
				t.Fatalf("step %+.0f %%, seed %d: change points %+v; want one at 20 ± 1", step*100, seed, cps)
			}
			p := cps[i]
			if math.Signbit(p.ChangePct) != math.Signbit(step) || math.Abs(p.ChangePct-step*100) > 4 {
				t.Errorf("step %+.0f %%, seed %d: change %+.1f %% at %d; want near %+.0f %%", step*100, seed, p.ChangePct, p.Index, step*100)
			}
			if !(p.Low <= p.ChangePct && p.ChangePct <= p.High) || p.P > DefaultAlpha {
				t.Errorf("step %+.0f %%, seed %d: %+v: want Low ≤ ChangePct ≤ High and P ≤ %v", step*100, seed, p, DefaultAlpha)
			}
			if len(cps) > 1 {
				t.Logf("step %+.0f %%, seed %d: %d change points: %+v", step*100, seed, len(cps), cps)
			}
			if seed == 0 {
				t.Logf("step %+.0f %%, seed 0: %+v", step*100, p)
			}
		}
	}
}

// TestDetectAAFalsePositives counts the A/A series (no step) in which
// Detect finds any change point at the default options (199
// permutations: a candidate that fails stops its test after two
// shuffles that split as well, so the 100 series take milliseconds).
func TestDetectAAFalsePositives(t *testing.T) {
	const series = 100
	flagged := 0
	for seed := range uint64(series) {
		xs := medians(benchSeries(1000+seed, 0).values())
		cps, err := Detect(xs, Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if len(cps) > 0 {
			flagged++
			t.Logf("A/A seed %d: %+v", 1000+seed, cps)
		}
	}
	rate := float64(flagged) / series
	t.Logf("A/A false-positive rate: %d of %d series (%.0f %%) at α = %v, %d permutations, min size %d",
		flagged, series, rate*100, DefaultAlpha, DefaultPermutations, DefaultMinSize)
	if rate > 0.05 {
		t.Errorf("A/A false-positive rate %.2f; want ≤ 0.05", rate)
	}
}

func TestDetectTwoSteps(t *testing.T) {
	s := synth{seed: 7, runs: 45, repeats: 5, level: 200, runNoise: 0.01, repeatNoise: 0.03}
	runs := s.values()
	for r := 15; r < 30; r++ { // up 15 % for runs 15–29, back after
		for i := range runs[r] {
			runs[r][i] *= 1.15
		}
	}
	cps, err := Detect(medians(runs), Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var at []int
	for _, p := range cps {
		at = append(at, p.Index)
	}
	if len(at) != 2 || math.Abs(float64(at[0]-15)) > 1 || math.Abs(float64(at[1]-30)) > 1 ||
		cps[0].ChangePct <= 0 || cps[1].ChangePct >= 0 {
		t.Fatalf("change points %+v; want a rise at 15 ± 1 and a fall at 30 ± 1", cps)
	}
	// The fall's Before is the raised segment's median, not the series'.
	if cps[1].Before < 200*1.1 {
		t.Errorf("the fall's Before is %v; want the raised level near 230", cps[1].Before)
	}
}

func TestDetectDeterministic(t *testing.T) {
	xs := medians(benchSeries(5, 0.06).values())
	a, err := Detect(xs, Options{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b, _ := Detect(xs, Options{Seed: 9})
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("Detect with one seed gave %+v, then %+v", a, b)
		}
	}
	if len(a) == 0 {
		t.Error("no change point for a 6 % step; the determinism checked nothing")
	}
}

func TestDetectNothingToSplit(t *testing.T) {
	for name, xs := range map[string][]float64{
		"empty":    nil,
		"short":    {1, 2, 3, 10, 11},
		"constant": slices.Repeat([]float64{42}, 40),
		"extremes": {-math.MaxFloat64, math.MaxFloat64, -math.MaxFloat64, math.MaxFloat64, 0, 0, 0},
	} {
		cps, err := Detect(xs, Options{})
		if err != nil || len(cps) != 0 {
			t.Errorf("%s: Detect = %+v, %v; want no change point, no error", name, cps, err)
		}
	}
}

func TestDetectBadInput(t *testing.T) {
	ok := make([]float64, 10)
	for _, c := range []struct {
		xs   []float64
		o    Options
		want string
	}{
		{[]float64{1, math.NaN(), 3}, Options{}, "xs[1] is NaN"},
		{[]float64{1, 2, math.Inf(-1)}, Options{}, "xs[2] is -Inf"},
		{ok, Options{Alpha: -0.1}, "Options.Alpha -0.1: want a level in (0, 1)"},
		{ok, Options{Alpha: 1}, "Options.Alpha 1"},
		{ok, Options{Alpha: math.NaN()}, "Options.Alpha NaN"},
		{ok, Options{Permutations: -1}, "Options.Permutations -1: want 1 to 100000"},
		{ok, Options{Permutations: MaxPermutations + 1}, "Options.Permutations 100001"},
		{ok, Options{MinSize: 1}, "Options.MinSize 1: want 2 to 10000"},
		{ok, Options{MinSize: -3}, "Options.MinSize -3"},
		{make([]float64, MaxPoints+1), Options{}, "xs has 10001 points: want at most 10000"},
	} {
		_, err := Detect(c.xs, c.o)
		if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Detect(%d points, %+v) error %v; want ErrInput naming %q", len(c.xs), c.o, err, c.want)
		}
	}
}
