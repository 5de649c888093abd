package capacity

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// checkKnee fails t unless res is what a knee at C gives: C ≥ Max is "≥
// Max", C < From is "< From", else a capacity c with c ≤ C < c·(1+R).
func checkKnee(t testing.TB, cfg Config, C float64, res Result) {
	t.Helper()
	checkInvariants(t, cfg, res)
	cfg = cfg.withDefaults()
	got := res.Median
	switch {
	case C >= cfg.Max:
		if got.Bound != AtLeastMax || got.Rate != cfg.Max {
			t.Fatalf("C %v ≥ Max %v: got %s", C, cfg.Max, got)
		}
	case C < cfg.From:
		if got.Bound != BelowFrom || got.Rate != cfg.From {
			t.Fatalf("C %v < From %v: got %s", C, cfg.From, got)
		}
	default:
		if got.Bound != Exact || got.Rate > C || got.Rate*(1+cfg.Resolution)*(1+1e-9) < C {
			t.Fatalf("C %v in %v–%v (resolution %v): got %s", C, cfg.From, cfg.Max, cfg.Resolution, got)
		}
	}
	for _, sr := range res.Searches {
		if len(sr.Notes) > 0 && sr.Capacity.Bound == Exact {
			t.Fatalf("a knee gave notes %q", sr.Notes)
		}
	}
}

func TestKneeTable(t *testing.T) {
	for _, tc := range []struct {
		from, max, res, factor, C float64
		confirm                   int
	}{
		{100, 100000, 0.05, 2, 1234, 3},
		{100, 100000, 0.05, 2, 100, 3},      // at From exactly
		{100, 100000, 0.05, 2, 99.99, 3},    // just below From
		{100, 100000, 0.05, 2, 99999, 3},    // just below Max
		{100, 100000, 0.05, 2, 100000, 3},   // at Max
		{100, 100000, 0.05, 2, 5e6, 3},      // far above Max
		{100, 100, 0.05, 2, 100, 3},         // From = Max, HEALTHY
		{100, 100, 0.05, 2, 50, 3},          // From = Max, UNHEALTHY
		{1, 1e7, 0.001, 1.1, 777777, 1},     // fine resolution, slow ladder
		{1, 1e7, 0.5, 10, 31, 0},            // coarse, no confirmation
		{0.001, 0.002, 0.01, 10, 0.0015, 2}, // tiny rates
		{5000, 80000, 0.02, 3, 5001, 5},
		{5000, 80000, 0.02, 3, 79000, 5},
	} {
		cfg := Config{From: tc.from, Max: tc.max, Resolution: tc.res, Factor: tc.factor, Confirm: tc.confirm}
		k := &knee{C: tc.C}
		res, err := Search(context.Background(), cfg, k, nil)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		checkKnee(t, cfg, tc.C, res)
		if tc.confirm > 0 && res.Median.Bound == Exact {
			sr := res.Searches[0]
			if len(sr.Above) != tc.confirm || sr.AboveHealthy != 0 {
				t.Fatalf("%+v: above %d steps, %d HEALTHY", tc, len(sr.Above), sr.AboveHealthy)
			}
			if len(res.LimitingReason) != 1 || !strings.HasPrefix(res.LimitingReason[0], "p99") {
				t.Fatalf("%+v: limiting reason %q", tc, res.LimitingReason)
			}
		}
	}
}

// TestKneeProperty: for random From, Max, Resolution, Factor, Confirm
// and capacity, the search finds the knee within Resolution.
func TestKneeProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		from := math.Exp(rng.Float64()*math.Log(1e6)) * MinRate * 10
		max := math.Min(from*math.Exp(rng.Float64()*math.Log(1e5)), MaxRate)
		cfg := Config{
			From:       from,
			Max:        max,
			Resolution: MinResolution + rng.Float64()*(0.2-MinResolution),
			Factor:     MinFactor + rng.Float64()*(MaxFactor-MinFactor),
			Confirm:    rng.IntN(5),
			Searches:   1 + rng.IntN(2),
		}
		C := from * math.Exp((rng.Float64()*1.4-0.2)*math.Log(max/from+1))
		res, err := Search(context.Background(), cfg, &knee{C: C}, nil)
		if err != nil {
			t.Fatalf("case %d %+v: %v", i, cfg, err)
		}
		checkKnee(t, cfg, C, res)
	}
}

func TestBounds(t *testing.T) {
	cfg := Defaults(100, 100000)
	k := &knee{C: 1e6}
	res, err := Search(context.Background(), cfg, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 11 rungs to Max, 3 confirmations at Max, nothing above Max.
	if res.Median.String() != "≥ 100000/s" || k.calls != 11+3 || len(res.LimitingReason) != 0 {
		t.Fatalf("≥ Max: %s after %d steps, limited by %q", res, k.calls, res.LimitingReason)
	}
	k = &knee{C: 10}
	res, err = Search(context.Background(), cfg, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Median.String() != "< 100/s" || k.calls != 1 || len(res.LimitingReason) != 1 {
		t.Fatalf("< From: %s after %d steps, limited by %q", res, k.calls, res.LimitingReason)
	}
}

func TestNoisyEnds(t *testing.T) {
	withNotes := 0
	for seed := range uint64(300) {
		cfg := Defaults(100, 100000)
		cfg.Confirm = int(seed % 4)
		cfg.Searches = 1 + int(seed%3)
		n := &noisy{C: 3000, Near: 0.3, P: 0.3, Up: 0.2 * float64(seed%2), rng: rand.New(rand.NewPCG(seed, 7))}
		res, err := Search(context.Background(), cfg, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, cfg, res)
		if res.Ended != cfg.Searches {
			t.Fatalf("seed %d: %d of %d searches ended", seed, res.Ended, cfg.Searches)
		}
		if n.Up == 0 && res.Max.Rate > n.C {
			t.Fatalf("seed %d: capacity %s above C with HEALTHY steps only turning UNHEALTHY", seed, res.Max)
		}
		for _, sr := range res.Searches {
			if len(sr.Notes) > 0 {
				withNotes++
			}
		}
	}
	if withNotes == 0 {
		t.Fatal("no noisy search said so in its notes")
	}
}

// TestStepDown: a confirmation failing at the found rate steps down one
// resolution step and confirms there, and the search says so.
func TestStepDown(t *testing.T) {
	cfg := Defaults(100, 100000)
	failed := 0
	p := script(func(s Step) bool {
		if s.Phase == PhaseConfirm && failed == 0 && s.Index > 0 {
			failed++
			return false // the first confirming sample fails
		}
		return s.Rate <= 1000
	})
	res, err := Search(context.Background(), cfg, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, cfg, res)
	sr := res.Searches[0]
	var found float64
	for _, st := range sr.Steps {
		if st.Step.Phase == PhaseConfirm {
			found = st.Step.Rate
			break
		}
	}
	want := found / 1.05
	if sr.StepDowns != 1 || math.Abs(sr.Capacity.Rate-want) > 1e-9*want || len(sr.Notes) == 0 {
		t.Fatalf("step-down: found %v, capacity %s (want %v), %d step-downs, notes %q", found, sr.Capacity, want, sr.StepDowns, sr.Notes)
	}
	// Every confirmation failing ends at From: "< From", bounded.
	p = script(func(s Step) bool { return s.Phase != PhaseConfirm && s.Rate <= 5000 })
	res, err = Search(context.Background(), cfg, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, cfg, res)
	if res.Median.Bound != BelowFrom || res.Searches[0].Steps[len(res.Searches[0].Steps)-1].Step.Rate != 100 {
		t.Fatalf("failing confirmations: %s", res)
	}
}

func TestSearchesMedian(t *testing.T) {
	cfg := Defaults(100, 100000)
	cfg.Searches = 3
	k := &knee{Per: map[int]float64{1: 3000, 2: 1000, 3: 2000}}
	res, err := Search(context.Background(), cfg, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, cfg, res)
	near := func(e Estimate, c float64) bool { return e.Bound == Exact && e.Rate <= c && e.Rate*1.05 >= c }
	if res.Ended != 3 || !near(res.Median, 2000) || !near(res.Min, 1000) || !near(res.Max, 3000) {
		t.Fatalf("median of 3000, 1000, 2000: %s", res)
	}
	if !strings.Contains(res.String(), "over 3 searches") {
		t.Fatalf("String: %s", res)
	}
	// Bounds keep their kind in the order.
	for _, tc := range []struct {
		per      map[int]float64
		med, min string
	}{
		{map[int]float64{1: 1e9, 2: 1e9, 3: 5000}, "≥ 100000/s", "exact"},
		{map[int]float64{1: 1, 2: 800, 3: 900}, "exact", "< 100/s"},
		{map[int]float64{1: 1, 2: 1, 3: 1e9}, "< 100/s", "< 100/s"},
	} {
		res, err := Search(context.Background(), cfg, &knee{Per: tc.per}, nil)
		if err != nil {
			t.Fatal(err)
		}
		med, min := res.Median.String(), res.Min.String()
		if res.Median.Bound == Exact {
			med = "exact"
		}
		if res.Min.Bound == Exact {
			min = "exact"
		}
		if med != tc.med || min != tc.min {
			t.Fatalf("%v: median %s min %s, want %s, %s", tc.per, res.Median, res.Min, tc.med, tc.min)
		}
	}
	// An even number: the lower middle.
	cfg.Searches = 4
	res, err = Search(context.Background(), cfg, &knee{Per: map[int]float64{1: 400, 2: 1e9, 3: 200, 4: 1e9}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !near(res.Median, 400) || res.Max.Bound != AtLeastMax {
		t.Fatalf("median of 4: %s", res)
	}
}

func TestMaxTimeCut(t *testing.T) {
	cfg := Defaults(100, 100000)
	cfg.StepTime = time.Minute
	cfg.MaxTime = 8 * time.Minute
	cp := &clockProber{Prober: &knee{C: 5000}, now: time.Unix(0, 0), step: time.Minute}
	res, err := search(context.Background(), cfg, cp, nil, cp.clock)
	if err != nil {
		t.Fatal(err)
	}
	sr := res.Searches[0]
	// Ladder 100 … 3200 HEALTHY, 6400 UNHEALTHY, two bisections.
	if !res.Cut || res.Ended != 0 || len(sr.Steps) != 8 || !sr.Cut {
		t.Fatalf("cut: %s, %d steps", res, len(sr.Steps))
	}
	if res.Lo < 3200 || res.Lo > 5000 || res.Hi <= 5000 || res.Hi > 6400 {
		t.Fatalf("cut bracket %v–%v", res.Lo, res.Hi)
	}
	if !strings.Contains(res.String(), "cut by MaxTime") || res.Median.String() != "none" {
		t.Fatalf("String: %s", res)
	}
	// A cut in the second search keeps the first one's figure.
	cfg.Searches = 2
	cfg.MaxTime = 25 * time.Minute
	cp = &clockProber{Prober: &knee{C: 5000}, now: time.Unix(0, 0), step: time.Minute}
	res, err = search(context.Background(), cfg, cp, nil, cp.clock)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cut || res.Ended != 1 || len(res.Searches) != 2 || res.Median.Bound != Exact {
		t.Fatalf("cut in search 2: %s", res)
	}
}

func TestProberError(t *testing.T) {
	boom := errors.New("target did not start")
	p := ProberFunc(func(_ context.Context, s Step) (Outcome, error) {
		if s.Index == 4 {
			return Outcome{}, boom
		}
		return Outcome{Healthy: true}, nil
	})
	res, err := Search(context.Background(), Defaults(100, 100000), p, nil)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "step 4 (ladder) at 800/s") {
		t.Fatalf("error %v", err)
	}
	if len(res.Searches) != 1 || len(res.Searches[0].Steps) != 3 || res.Ended != 0 {
		t.Fatalf("result with the error: %+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Search(ctx, Defaults(100, 100000), &knee{C: 1}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled context: %v", err)
	}
}
