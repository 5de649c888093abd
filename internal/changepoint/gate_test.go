package changepoint

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// gateRuns draws 11 runs of 5 repeats around 1000 (1 % run noise, 3 %
// repeat noise): the first 10 are the history, the last the latest,
// scaled by 1 + change.
func gateRuns(seed uint64, change float64) (history [][]float64, latest []float64) {
	runs := synth{seed: seed, runs: 11, repeats: 5, level: 1000, runNoise: 0.01, repeatNoise: 0.03}.values()
	latest = runs[10]
	for i := range latest {
		latest[i] *= 1 + change
	}
	return runs[:10], latest
}

func TestRegressedFlagsWorseRun(t *testing.T) {
	for _, c := range []struct {
		name   string
		change float64
		better int
		want   bool
	}{
		{"latency 10 % up", 0.10, -1, true},
		{"req/s 10 % down", -0.10, +1, true},
		{"latency 10 % down", -0.10, -1, false},
		{"req/s 10 % up", 0.10, +1, false},
	} {
		for seed := range uint64(10) {
			h, l := gateRuns(seed, c.change)
			v, err := Regressed(h, l, c.better, 5, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			if v.Regressed != c.want || !v.Tested || v.NHistory != 50 || v.NLatest != 5 || v.Runs != 10 {
				t.Errorf("%s, seed %d: %+v; want Regressed %v, tested, n = 50 (10 runs) vs 5", c.name, seed, v, c.want)
			}
			prefix := "no regression (no worse): "
			if c.want {
				prefix = "regression: "
			}
			if !strings.HasPrefix(v.Evidence, prefix) {
				t.Errorf("%s, seed %d: evidence %q; want it to start %q", c.name, seed, v.Evidence, prefix)
			}
			if seed == 0 {
				t.Logf("%s: %s", c.name, v.Evidence)
			}
		}
	}
}

func TestRegressedAA(t *testing.T) {
	const trials = 100
	flagged := 0
	for seed := range uint64(trials) {
		h, l := gateRuns(500+seed, 0)
		for _, better := range []int{+1, -1} {
			v, err := Regressed(h, l, better, 5, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			if v.Regressed {
				flagged++
				t.Logf("A/A seed %d: %s", 500+seed, v.Evidence)
			}
		}
	}
	t.Logf("A/A latest runs flagged: %d of %d verdicts (5 %% threshold, α = 0.05)", flagged, 2*trials)
	if flagged > 2*trials/20 {
		t.Errorf("%d of %d A/A verdicts regressed; want at most 5 %%", flagged, 2*trials)
	}
	h, l := gateRuns(500, 0)
	if v, _ := Regressed(h, l, -1, 5, 0.05); v.Regressed {
		t.Errorf("A/A seed 500 regressed: %s", v.Evidence)
	}
}

func TestRegressedThresholdAndSignificance(t *testing.T) {
	h, l := gateRuns(3, 0.10)
	if v, _ := Regressed(h, l, -1, 20, 0.05); v.Regressed || !strings.Contains(v.Evidence, "within the 20 % threshold") {
		t.Errorf("10 %% worse against a 20 %% threshold: %s", v.Evidence)
	}
	// One value a side cannot be significant.
	v, err := Regressed([][]float64{{100}}, []float64{200}, -1, 5, 0.05)
	if err != nil || v.Regressed || v.Tested || !strings.Contains(v.Evidence, "untested") {
		t.Errorf("1 vs 1 value: %+v, %v; want untested, not regressed", v, err)
	}
	// A shift past the threshold that the repeats cannot tell from noise.
	noisy := [][]float64{{50, 150, 100}, {60, 140, 100}}
	v, _ = Regressed(noisy, []float64{45, 160, 110}, -1, 5, 0.05)
	if v.Regressed || !v.Tested || !strings.Contains(v.Evidence, "not significant") {
		t.Errorf("noisy 10 %% shift: %+v; want tested, not significant", v)
	}
	if v, _ := Regressed([][]float64{{0, 0, 0, 0, 0}}, []float64{1, 1, 1, 1, 1}, -1, 5, 0.05); v.ChangePct != 0 || v.Regressed {
		t.Errorf("history median 0: %+v; want ChangePct 0 and no regression", v)
	}
}

func TestRegressedBadInput(t *testing.T) {
	h, l := gateRuns(1, 0)
	for _, c := range []struct {
		h    [][]float64
		l    []float64
		b    int
		th   float64
		a    float64
		want string
	}{
		{h, l, 0, 5, 0.05, "better 0: want +1"},
		{h, l, 2, 5, 0.05, "better 2"},
		{h, l, 1, -1, 0.05, "thresholdPct -1: want 0 to 1000"},
		{h, l, 1, math.NaN(), 0.05, "thresholdPct NaN"},
		{h, l, 1, 5, 0, "alpha 0: want a level in (0, 1)"},
		{h, l, 1, 5, 1.5, "alpha 1.5"},
		{nil, l, 1, 5, 0.05, "history has no values"},
		{[][]float64{{}, {}}, l, 1, 5, 0.05, "history has no values"},
		{h, nil, 1, 5, 0.05, "latest has no values"},
		{[][]float64{{1, math.Inf(1)}}, l, 1, 5, 0.05, "history[0][1] is +Inf"},
		{h, []float64{1, math.NaN()}, 1, 5, 0.05, "latest[1] is NaN"},
		{[][]float64{make([]float64, MaxValues), {1}}, l, 1, 5, 0.05, "history has more than 100000 values"},
		{h, make([]float64, MaxValues+1), 1, 5, 0.05, "latest has 100001 values: want at most 100000"},
	} {
		_, err := Regressed(c.h, c.l, c.b, c.th, c.a)
		if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Regressed(better %d, threshold %v, alpha %v) error %v; want ErrInput naming %q", c.b, c.th, c.a, err, c.want)
		}
	}
}
