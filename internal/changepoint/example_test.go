package changepoint_test

import (
	"fmt"

	"github.com/benchrig/benchrig/internal/changepoint"
)

func Example() {
	// p99 latency in ms of one cell, one median a run: a change at run 10.
	p99 := []float64{20.1, 19.9, 20.0, 20.2, 19.8, 20.0, 20.1, 19.9, 20.0, 20.1,
		22.1, 21.9, 22.0, 22.2, 21.8, 22.0, 22.1, 21.9}
	cps, err := changepoint.Detect(p99, changepoint.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	for _, p := range cps {
		fmt.Printf("run %d: %.1f → %.1f ms (%+.0f %%), p = %.3f\n", p.Index, p.Before, p.After, p.ChangePct, p.P)
	}

	// The repeats of the runs since that change, and of a new run.
	since := [][]float64{{22.0, 22.3, 21.8}, {21.9, 22.1, 22.0}, {22.2, 21.7, 22.1}}
	latest := []float64{24.3, 24.0, 24.6}
	v, err := changepoint.Regressed(since, latest, -1, 5, 0.05)
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Regressed)
	fmt.Println(v.Evidence)
	// Output:
	// run 10: 20.0 → 22.0 ms (+10 %), p = 0.005
	// true
	// regression: 10.5 % worse, past the 5 % threshold and significant: median 22 → 24.3 (+10.5 %, lower is better), U test p = 0.00909 (α = 0.05), n = 9 (3 runs) vs 3
}
