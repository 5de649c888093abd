package changepoint

import (
	"fmt"
	"math"

	"golang.org/x/perf/benchmath"
)

// Verdict is Regressed's answer for one series.
type Verdict struct {
	// Regressed: the change is significant (P ≤ Alpha) and past the
	// threshold in the worse direction.
	Regressed bool
	// Tested is false when the values are too few for the U test to
	// reach Alpha however they fall; such a verdict never regresses.
	Tested        bool
	HistoryMedian float64 // median of the pooled history values
	LatestMedian  float64 // median of the latest run's values
	// ChangePct is (LatestMedian ÷ HistoryMedian − 1) × 100, 0 when
	// HistoryMedian is 0 or it overflows.
	ChangePct    float64
	P            float64 // two-sided Mann–Whitney U test, history vs latest
	Alpha        float64
	ThresholdPct float64
	Better       int // +1 higher is better, −1 lower is better
	Runs         int // runs in the history
	NHistory     int // values in the history
	NLatest      int // values in the latest run
	// Evidence is one line for a CI log.
	Evidence string
}

// Regressed tells whether latest, one run's repeat values of a series,
// regressed against history, the repeat values of the runs since the
// series' last change point (Detect's last Point.Index onwards). better
// is +1 when higher is better (requests/s) and −1 when lower is better
// (latency, CPU, memory); thresholdPct, from 0 to 1000, is how far the
// median must move in the worse direction, in percent; alpha, in (0, 1),
// is the level of the U test (benchmath.AssumeNothing.Compare, as
// `benchrig compare` does) of the pooled history values against latest.
//
// Both must hold: the test alone flags small shifts of long histories,
// and a new run's repeats share that run's conditions, so they vary less
// than runs do; the threshold is what keeps run-to-run drift out.
// At most MaxValues values on each side.
func Regressed(history [][]float64, latest []float64, better int, thresholdPct, alpha float64) (Verdict, error) {
	v := Verdict{Alpha: alpha, ThresholdPct: thresholdPct, Better: better, Runs: len(history)}
	switch {
	case better != 1 && better != -1:
		return v, fmt.Errorf("%w: better %d: want +1 (higher is better) or -1 (lower is better)", ErrInput, better)
	case !(thresholdPct >= 0 && thresholdPct <= 1000):
		return v, fmt.Errorf("%w: thresholdPct %v: want 0 to 1000", ErrInput, thresholdPct)
	case !(alpha > 0 && alpha < 1):
		return v, fmt.Errorf("%w: alpha %v: want a level in (0, 1)", ErrInput, alpha)
	}
	var pooled []float64
	for i, run := range history {
		for j, x := range run {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return v, fmt.Errorf("%w: history[%d][%d] is %v: want finite values", ErrInput, i, j, x)
			}
		}
		if len(pooled)+len(run) > MaxValues {
			return v, fmt.Errorf("%w: history has more than %d values", ErrInput, MaxValues)
		}
		pooled = append(pooled, run...)
	}
	for j, x := range latest {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return v, fmt.Errorf("%w: latest[%d] is %v: want finite values", ErrInput, j, x)
		}
	}
	switch {
	case len(pooled) == 0:
		return v, fmt.Errorf("%w: history has no values: want at least one run with values", ErrInput)
	case len(latest) == 0:
		return v, fmt.Errorf("%w: latest has no values", ErrInput)
	case len(latest) > MaxValues:
		return v, fmt.Errorf("%w: latest has %d values: want at most %d", ErrInput, len(latest), MaxValues)
	}
	v.NHistory, v.NLatest = len(pooled), len(latest)
	buf := make([]float64, max(len(pooled), len(latest)))
	v.HistoryMedian, v.LatestMedian = median(pooled, buf), median(latest, buf)
	v.ChangePct = changePct(v.HistoryMedian, v.LatestMedian)
	th := benchmath.Thresholds{CompareAlpha: alpha}
	v.P = benchmath.AssumeNothing.Compare(benchmath.NewSample(pooled, &th), benchmath.NewSample(latest, &th)).P
	v.Tested = minP(v.NHistory, v.NLatest) <= alpha
	worse := -v.ChangePct * float64(better) // percent in the worse direction
	v.Regressed = v.Tested && v.P <= alpha && worse > thresholdPct
	v.Evidence = evidence(v, worse)
	return v, nil
}

// evidence writes the verdict's line.
func evidence(v Verdict, worse float64) string {
	dir := "higher is better"
	if v.Better < 0 {
		dir = "lower is better"
	}
	facts := fmt.Sprintf("median %.4g → %.4g (%+.1f %%, %s), U test p = %.3g (α = %g), n = %d (%d runs) vs %d",
		v.HistoryMedian, v.LatestMedian, v.ChangePct, dir, v.P, v.Alpha, v.NHistory, v.Runs, v.NLatest)
	var why string
	switch {
	case v.Regressed:
		return fmt.Sprintf("regression: %.1f %% worse, past the %g %% threshold and significant: %s", worse, v.ThresholdPct, facts)
	case !v.Tested:
		why = fmt.Sprintf("untested: too few values for p ≤ %g", v.Alpha)
	case worse <= 0:
		why = "no worse"
	case worse <= v.ThresholdPct:
		why = fmt.Sprintf("%.1f %% worse, within the %g %% threshold", worse, v.ThresholdPct)
	default:
		why = fmt.Sprintf("%.1f %% worse, not significant", worse)
	}
	return "no regression (" + why + "): " + facts
}

// minP is the smallest two-sided p-value a U test of n1 against n2
// values can give: 2 ÷ C(n1+n2, n1).
func minP(n1, n2 int) float64 {
	c := 1.0
	for i := 1; i <= n1 && c < 1e300; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return min(1, 2/c)
}
