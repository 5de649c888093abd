package cli

import (
	"maps"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/cliflag"
	"github.com/benchrig/benchrig/internal/execute"
	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/quick"
)

// The quick modes (benchrig http|pg|resp) are suites of one target: their
// flags build an in-memory suite (package quick), which runs through the same
// Runner, fair order, phases, verdicts and results file as `benchrig run`.
// Each protocol registers its own (RegisterQuick), from its directory.

// quickModes are the registered quick modes, by protocol key.
var quickModes = map[string]func(*App) *cobra.Command{}

// RegisterQuick registers the quick mode of a protocol: newCmd makes its
// command for an invocation. Registering a key twice panics.
func RegisterQuick(key string, newCmd func(*App) *cobra.Command) {
	if _, dup := quickModes[key]; dup {
		panic("cli.RegisterQuick: " + key + " registered twice")
	}
	quickModes[key] = newCmd
}

// QuickCommands are the registered quick modes' commands, in order of
// their keys.
func QuickCommands(a *App) []*cobra.Command {
	var out []*cobra.Command
	for _, k := range slices.Sorted(maps.Keys(quickModes)) {
		c := quickModes[k](a)
		a.RegisterUI(c)
		out = append(out, c)
	}
	return out
}

// MaxMissUsage is the help of --max-miss (benchrig pg and resp).
const MaxMissUsage = "health threshold: largest tolerated share (0–1) of reads answered without a value for a key (default 0 where benchrig filled the keys, else misses are reported and tolerated)"

// QuickFlags are the flags every quick mode shares: the suite's options
// (quick.Common) and where the results go.
type QuickFlags struct {
	quick.Common
	out           string
	force, resume bool
	resumeChanged bool
	json          bool
	failUnhealthy bool
	noCalibrate   bool
}

// Register adds the shared flags to a quick mode's command, defaultConns
// being its default -c.
func (q *QuickFlags) Register(c *cobra.Command, defaultConns int) {
	f := c.Flags()
	q.Conns, q.Pipelines = []int{defaultConns}, []int{1}
	f.VarP(cliflag.Ints(&q.Conns), "connections", "c", "connections (workers); a list such as 4,64 runs one case per value (default 32 with --rate)")
	f.VarP(cliflag.Ints(&q.Pipelines), "pipeline", "p", "requests in flight per connection (closed loop); a list runs one case per value")
	cliflag.DurationVarP(f, &q.Duration, "duration", "d", 10*time.Second, "length of the recorded load window")
	f.Int64VarP(&q.Requests, "requests", "n", 0, "stop after this many requests (alone: no duration bound)")
	cliflag.DurationVarP(f, &q.Warmup, "warmup", "", 0, "load run before the window and not recorded")
	f.IntVarP(&q.Repeats, "repeats", "r", 1, "samples of every case, in a fair order (compare wants 4 or more)")
	f.StringVarP(&q.out, "out", "o", "", "write the results file (JSON Lines: header, one line per sample, footer with a SHA-256)")
	f.BoolVar(&q.force, "force", false, "replace an existing -o file")
	f.BoolVar(&q.resume, "resume", false, "continue the partial -o file of an interrupted run (its recorded settings, not these flags)")
	f.BoolVar(&q.resumeChanged, "resume-changed", false, "with --resume: resume although a target's binary, version or settings changed")
	f.BoolVar(&q.json, "json", false, "print the results file (JSON Lines) on stdout instead of tables")
	f.Float64VarP(&q.Rate, "rate", "R", 0, "constant arrival rate in requests per second across all connections (open loop)")
	f.StringVar(&q.Arrival, "arrival", "constant", "arrivals in rate mode: constant or poisson")
	f.Uint64Var(&q.Seed, "seed", 1, "seed of the run's pseudo-random choices (poisson arrivals, key orders)")
	f.IntVar(&q.MaxBacklog, "max-backlog", 0, "due requests that may wait for a free connection before sends are dropped (default rate × 1 s)")
	f.DurationVar(&q.TimerSlack, "timer-slack", 0, "at a rate, wake up to this long after a request fell due and send every request due by then at once (0: a wake-up per due time; up to 10ms): less client CPU, a lag up to this long, measured")
	f.BoolVar(&q.failUnhealthy, "fail-unhealthy", false, "exit with code 3 when a sample is UNHEALTHY")
	f.BoolVar(&q.noCalibrate, "no-calibrate", false, "do not measure benchrig's own floor (latency and CPU per request against a null peer, ≤ 1 s) before the first sample")
	cliflag.DurationVarP(f, &q.MaxP99, "max-p99", "", 250*time.Millisecond, "health threshold: largest acceptable p99 (corrected in rate mode)")
	f.Float64Var(&q.MinCoverage, "min-coverage", 95, "health threshold: least target coverage in percent (rate mode)")

	f.StringVar(&q.TargetCPUs, "target-cpus", "", "pin the server benchrig starts (--target, --ephemeral) to this CPU list (e.g. 0)")
	f.StringVar(&q.TargetCPUs, "server-cpus", "", "the same as --target-cpus")
	_ = f.MarkHidden("server-cpus")
	f.StringVar(&q.ClientCPUs, "client-cpus", "", "pin benchrig's load generation to this CPU list (GOMAXPROCS follows)")
	f.StringVar(&q.BusyPoll, "busy-poll", "auto", "how long the client polls before it sleeps between answers (closed loop): auto (20µs when it runs beside a pinned target on other CPUs, else off), off, or a duration up to 1ms")
	f.StringVar(&q.IOUring, "io-uring", "auto", "whether the client's event loops may go on io_uring instead of epoll (closed loop; RESP, PostgreSQL, HTTP/1.1, HTTP/2): auto (when they do not busy-poll and the kernel allows it) or off")
	f.StringVar(&q.Coalesce, "coalesce", "auto", "whether event loops on io_uring may wait a little for more answers before they handle the first (HTTP/2): auto (with 4 or more connections busy, at most 1% of the answers' moving-average latency and 50µs) or off")
	cliflag.DurationVarP(f, &q.Interval, "sample-interval", "", time.Second, "server resource sampling period (≥ 100ms)")
	f.BoolVar(&q.NoPSS, "no-pss", false, "do not read the server's PSS (RSS only): each reading of a big multi-process server costs the client CPU")
	cliflag.DurationVarP(f, &q.Baseline, "baseline", "", 0, "idle phase sampled before the load")
	cliflag.DurationVarP(f, &q.Settle, "settle", "", 0, "idle phase between warm-up and load")
	cliflag.DurationVarP(f, &q.Recovery, "recovery", "", 0, "idle phase sampled after the load")
	q.Changed = f.Changed
}

// Options checks the flags that are not the suite's: where results go.
func (q *QuickFlags) Options() error {
	if q.resume && q.force {
		return exitcode.Usagef("give --resume or --force, not both")
	}
	if q.resume && q.out == "" {
		return exitcode.Usagef("--resume needs -o/--out: the results file to continue")
	}
	return nil
}

// RunQuick runs a quick mode's job with the results going where its flags
// say (execute.RunQuick).
func RunQuick(a *App, q *QuickFlags, job execute.Quick) error {
	job.Out = execute.Output{Path: q.out, Force: q.force, Resume: q.resume || q.resumeChanged, ResumeChanged: q.resumeChanged, JSON: q.json}
	job.FailUnhealthy, job.NoCalibrate = q.failUnhealthy, q.noCalibrate
	return a.Invocation().RunQuick(job)
}
