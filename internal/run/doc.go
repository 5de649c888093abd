// Package run runs a suite's plan, protocol-blind: a Runner asks each
// target variant's system (package system) for the spec of every sample,
// and Measure runs one sample — it starts a fresh target (or attaches to
// one), checks its responses, samples its process tree through every phase
// (baseline, warm-up, settle, load, recovery), drives the load engine,
// checks again, stops the target and returns one result.Sample, also when
// the target crashes or the run is interrupted, so no finished figure is
// lost. Quick modes (benchrig http|pg|resp) are suites of one target.
//
//	s := run.Measure(ctx, system.Spec{Driver: d, Engine: cfg, Phases: result.Phases{Load: 10 * time.Second}})
//	fmt.Println(s.Verdict.Healthy)
package run
