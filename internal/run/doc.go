// Package run measures one sample: it starts a fresh target (or attaches to
// one), checks its responses, samples its process tree through every phase
// (baseline, warm-up, settle, load, recovery), drives the load engine, checks
// again, stops the target and returns one result.Sample — also when the
// target crashes or the run is interrupted, so no finished figure is lost.
//
//	s := run.Measure(ctx, run.Spec{Driver: d, Engine: cfg, Phases: run.Phases{Load: 10 * time.Second}})
//	fmt.Println(s.Verdict.Healthy)
package run
