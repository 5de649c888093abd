package changepoint

import (
	"math/rand/v2"
	"slices"
)

// synth describes a seeded synthetic series: runs of repeats drawn
// around level, the level multiplied by 1 + step from run stepAt on.
type synth struct {
	seed          uint64
	runs, repeats int
	level         float64
	// runNoise and repeatNoise are standard deviations relative to the
	// level: of a run's offset (its machine, its build) and of each
	// repeat within the run.
	runNoise, repeatNoise float64
	step                  float64
	stepAt                int // no step when step is 0
}

// benchSeries is 30 runs of 5 repeats around 1000 with 1 % noise from
// run to run and 3 % from repeat to repeat, stepping by step at run 20.
func benchSeries(seed uint64, step float64) synth {
	return synth{seed: seed, runs: 30, repeats: 5, level: 1000, runNoise: 0.01, repeatNoise: 0.03, step: step, stepAt: 20}
}

// values draws the series: one slice of repeats a run.
func (s synth) values() [][]float64 {
	rng := rand.New(rand.NewPCG(s.seed, 0x73796e7468))
	out := make([][]float64, s.runs)
	for r := range out {
		level := s.level
		if s.step != 0 && r >= s.stepAt {
			level *= 1 + s.step
		}
		level *= 1 + s.runNoise*rng.NormFloat64()
		out[r] = make([]float64, s.repeats)
		for i := range out[r] {
			out[r][i] = level * (1 + s.repeatNoise*rng.NormFloat64())
		}
	}
	return out
}

// medians is each run's median: the series Detect reads.
func medians(runs [][]float64) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		s := slices.Clone(r)
		slices.Sort(s)
		n := len(s)
		out[i] = (s[(n-1)/2] + s[n/2]) / 2
	}
	return out
}
