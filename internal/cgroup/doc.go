// Package cgroup runs a benchmark target under limits like a container's
// --cpus, --memory, --memory-swap and --pids-limit: in a control group of
// its own per sample, made under benchrig's own group, and removed again
// with everything in it. It supports cgroup v1 and v2 behind one API and
// reads the kernel's own counters back (CPU used and throttled, memory
// peak and OOM kills, pids).
//
//	h, err := cgroup.Detect() // an error says why no hierarchy is usable
//	g, err := h.Create("sample-3", cgroup.Limits{CPUs: 1.5, Memory: 512 << 20, Swap: new(int64), Pids: 256})
//	defer g.Remove(ctx) // SIGKILLs what is left, removes the directories
//	exe, _ := os.Executable()
//	cmd := exec.Command(exe, cgroup.ShimArgs(g, argv)...)
//	…
//	st, err := g.Stats()
//
// # Where groups are made
//
// Detect reads /proc/self/cgroup (per controller on v1) and makes groups
// under benchrig's own group, never directly under a hierarchy's root:
// when benchrig runs at the root, they go into a group named benchrig
// there, made when needed and removed when the last group in it is. A
// group is named benchrig-<pid>-<start>-<name>, after the PID and start
// time (clock ticks after boot) of the benchrig that made it, so that
// RemoveStale can find the groups of a benchrig that was killed and tell
// them from those of a live one.
//
// On v2 the controllers must be enabled in benchrig's group's
// cgroup.subtree_control, which the kernel refuses while that group holds
// processes other than in the root: benchrig then needs a delegated group
// of its own, and Detect says so.
//
// # The exec shim
//
// Go cannot run code between fork and exec, and v1 cannot clone a process
// straight into a group, so a target is started as benchrig's own binary
// with ShimArgs: it moves itself into the group and execs the target,
// which keeps its PID. cmd/benchrig's main must call MaybeRunShim first
// thing.
package cgroup
