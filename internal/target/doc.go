// Package target manages the servers benchrig measures: it starts a target
// as a fresh process group pinned to chosen CPUs with its output in a per-run
// log file, waits for a readiness probe, runs response checks against it, and
// stops its whole process tree so that nothing is left behind. Every target
// runs under a watchdog (benchrig re-executed; see watchdog.go) that is a
// child subreaper and kills the tree, daemonised children included, on Stop
// or when benchrig dies, kill -9 included. It can also attach to
// a server that is already running, by PID or by the port it listens on.
//
// A managed target's life:
//
//	p, err := target.Start(ctx, target.Spec{
//		Name:  "node-http",
//		Argv:  []string{"node", "server.js"},
//		CPUs:  "0",
//		Ready: target.ProbeSpec{HTTP: "http://127.0.0.1:3000/"},
//	}, nil)
//	if err != nil {
//		return err // one line: target, cause, log file
//	}
//	defer p.Stop(context.Background())
//	if err := target.RunCheck(ctx, target.Check{URL: "http://127.0.0.1:3000/", BodyContains: "hello"}); err != nil {
//		return err
//	}
//	// … measure p.PID() while the load runs; watch p.Exited() …
//
// With Spec.Limits, each start runs in a cgroup of its own with a CPU
// quota, memory, swap and pids limits (see limits.go and docs/limits.md):
// Process.CgroupStats reads the kernel's counters at any moment (the
// sampler takes them at each phase edge; CgroupFigures makes the result's
// figures of two readings), LimitError says when the memory or pids limit
// ended or held the target, and the group is removed with the tree.
//
// Probes are an interface so that other packages (the ephemeral PostgreSQL
// and redis-server targets) can plug in protocol-level readiness checks.
//
// Linux only: the package reads /proc (through internal/proc) and uses
// process groups, PR_SET_CHILD_SUBREAPER, Pdeathsig and sched_setaffinity.
// Any binary that links it can start targets: the watchdog is handled in
// the package's init, before main.
package target
