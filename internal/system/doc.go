// Package system is what the runner asks of a system under test: one small
// interface (System: Prepare, Spec per sample, Close), the per-sample Spec it
// returns (driver, how the target starts or is attached, checks, statistics),
// and a registry of target kinds. Each kind lives in its own package
// (command, attach and address here; the server kinds postgres and redis
// under internal/server) and is registered by the command line, so package
// run stays protocol-blind.
//
//	system.Register(suite.KindCommand, command.New)
//	sys, _ := system.New(system.Env{Suite: s, Name: "web", Target: s.Targets["web"], Cells: cells})
//	prov, _ := sys.Prepare(ctx)
//	spec, _ := sys.Spec(ctx, cells[0], system.Spec{Key: "web#1"})
package system
