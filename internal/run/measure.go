package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/benchrig/benchrig/internal/driver"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/metrics"
	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/sample"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/target"
)

// stopTimeout bounds stopping a target once the sample is done (also after
// Ctrl-C, when the run's context is already cancelled).
const stopTimeout = 15 * time.Second

// Measure runs one sample from start to finish. It never panics on a failing
// target: a target that does not start, fails its pre-check or crashes
// yields a sample that says so (Error, or an UNHEALTHY verdict with the exit
// status and log tail). The target is stopped before Measure returns, also
// when ctx is cancelled.
func Measure(ctx context.Context, spec system.Spec) *result.Sample {
	s, _ := measure(ctx, spec, nil, nil)
	return s
}

// measure runs one sample. checkRan, if set, is told what a started
// target's tree runs once it is ready (see recordRan); its error refuses
// the sample: the target is stopped, and measure returns the error with
// the unfinished sample, which is not to be written.
func measure(ctx context.Context, spec system.Spec, exec Executor, checkRan func([]result.RanFile) error) (*result.Sample, error) {
	m := &measurement{spec: spec, exec: exec, checkRan: checkRan, s: &result.Sample{
		Key: spec.Key, Cell: spec.Cell, Repeat: spec.Repeat, Smoke: spec.Smoke,
		Case: spec.Case, Variant: spec.Variant,
		Protocol: spec.Protocol, Config: spec.Config, Started: time.Now().UTC(),
		Verdict: result.Verdict{Healthy: true},
	}}
	m.run(ctx)
	if m.refused != nil {
		return m.s, m.refused
	}
	m.annotate()
	if spec.Judge != nil && m.s.Load != nil {
		spec.Judge(m.s)
	}
	m.s.Finished = time.Now().UTC()
	return m.s, nil
}

type measurement struct {
	spec    system.Spec
	exec    Executor   // nil: the local engine
	eng     LoadEngine // the executor's engine, once made
	s       *result.Sample
	tgt     system.Target
	sampler *sample.Sampler
	// cg tracks a limited target's cgroup counters (nil: no limits).
	cg      *cgroupTrack
	client  *clientSampler
	scraper *metrics.Scraper
	phase   string
	phaseAt time.Time
	// exitStatus is set once the target was seen dead.
	exitStatus string
	// pmu guards phase against the exit watcher, which records in
	// exitPhase the phase the target died in: the sample only notices the
	// exit at the next phase edge (a target killed during the load was
	// reported "during recovery").
	pmu       sync.Mutex
	exitPhase string
	exited    <-chan struct{} // the target's, nil if it cannot exit on its own
	// companions are sampled beside the target (companions.go).
	companions []*companionSampler
	// checkRan judges what a started target's tree runs (recordRan);
	// refused is its refusal.
	checkRan func([]result.RanFile) error
	refused  error
}

// ranReporter is implemented by started targets that can tell what their
// process tree runs (*target.Process).
type ranReporter interface {
	Ran() ([]target.File, error)
}

// recordRan records in the sample what a started target's tree runs once
// it is ready, before anything is sampled (hashing a runtime the first
// time costs benchrig some CPU: never inside a measured window), and asks
// checkRan about it. A tree that cannot be read is recorded as nothing.
func (m *measurement) recordRan() error {
	rt, ok := m.tgt.(ranReporter)
	if !ok || m.s.Target == nil {
		return nil
	}
	files, err := rt.Ran()
	if err != nil {
		return nil
	}
	ran := make([]result.RanFile, len(files))
	for i, f := range files {
		ran[i] = result.RanFile{Path: f.Path, SHA256: f.SHA256, Kind: f.Kind}
	}
	m.s.Target.Ran = ran
	if m.checkRan != nil {
		return m.checkRan(ran)
	}
	return nil
}

func (m *measurement) fail(format string, args ...any) {
	m.s.Error = fmt.Sprintf(format, args...)
	m.s.Verdict = result.Verdict{Healthy: false, Reasons: []string{m.s.Error}}
}

func (m *measurement) run(ctx context.Context) {
	spec := m.spec
	if err := spec.Phases.Validate(); err != nil {
		m.fail("%v", err)
		return
	}
	// CPUs the client may not use fail the sample before a target starts
	// (a kernel "invalid argument" from pinning a thread said nothing).
	if spec.ClientCPUs != "" {
		if err := checkClientCPUs(spec.ClientCPUs); err != nil {
			m.fail("pin the client to CPUs %s: %v", spec.ClientCPUs, err)
			return
		}
	}
	// 1. the target: fresh, or attached, or none (an address).
	switch {
	case spec.Start != nil:
		t, info, err := spec.Start(ctx)
		if err != nil {
			m.s.Target = info
			tail, logged := quoteStartLog(err)
			if info != nil && info.LogTail == "" {
				info.LogTail = tail
			}
			empty := ""
			if logged && tail == "" {
				empty = "; the target's log is empty"
			}
			m.fail("start target: %v%s", err, empty)
			return
		}
		m.tgt, m.s.Target = t, info
		m.cg = trackCgroup(t, spec.SamplerInterval)
		defer m.stopTarget()
		if err := m.recordRan(); err != nil {
			m.refused = err
			m.fail("%v", err)
			return
		}
	case spec.Attach != nil:
		m.tgt, m.s.Target = spec.Attach, spec.AttachInfo
	}

	// 2. pre-checks: a failure aborts the sample, response shown.
	m.enter("pre-check", 0)
	for _, c := range spec.PreChecks {
		if err := c.Run(ctx); err != nil {
			if m.noteExit() {
				m.fail("pre-check %s failed: %v; target exited: %s", c.Name, err, m.exitStatus)
			} else {
				m.fail("pre-check %s failed: %v%s", c.Name, err, m.logHint())
			}
			return
		}
	}

	// 3. the sampler runs from the baseline to the end of the recovery.
	if m.tgt != nil && m.tgt.PID() > 0 {
		cfg := sample.Config{Interval: spec.SamplerInterval, NoPSS: spec.SamplerNoPSS, PID: m.tgt.PID()}
		if c, ok := m.tgt.(system.Companioned); ok {
			cfg.Also = c.AlsoPIDs() // a sidecar is part of the system under test
		}
		smp, err := sample.Start(ctx, cfg)
		if err != nil {
			m.fail("sample target: %v", err)
			return
		}
		m.sampler = smp
		defer m.finishSampler()
		if spec.OnSampler != nil {
			spec.OnSampler(smp)
		}
	}
	m.startCompanions(ctx)
	defer m.finishCompanions()
	m.client = startClientSampler(spec.SamplerInterval)
	defer func() { m.s.ClientCPU = m.client.stop() }()
	m.scraper = startMetrics(ctx, spec.Metrics)
	defer func() { m.s.Metrics = m.scraper.Stop() }()
	exited := m.exitedChan()
	m.enter(sample.PhaseBaseline, spec.Phases.Baseline)
	if !m.sleep(ctx, spec.Phases.Baseline, exited) {
		m.interrupted(ctx)
		return
	}

	// 4. the client: pinned if asked, connections opened once.
	placement := &result.Placement{}
	if m.s.Target != nil {
		placement.TargetCPUs = m.s.Target.CPUs
	}
	clientCPUs := spec.ClientCPUs
	if clientCPUs == "" && m.exec == nil && (m.s.Target != nil || onLoopback(spec.Driver)) {
		// a target on this machine: keep off its CPUs when it is pinned
		// (by benchrig, or found pinned), else leave it half of them
		placement.ServerCPUs = serverCPUs(placement, m.s.Target, spec.Driver)
		if clientCPUs = proc.BesideTarget(serverPinned(placement)); clientCPUs != "" {
			placement.ClientChosen = true
		} else if placement.TargetCPUs == "" { // every CPU shared with the server
			n := max(1, load.UsableCores()/2)
			m.spec.Engine.Loops, placement.ClientLoops = n, n
			// and as many Go Ps, when the process is benchrig's
			// alone (a server sharing it would lose its Ps): fewer
			// idle Ps to wake and steal from on every wake-up of
			// the loops. GOMAXPROCS given (suite or environment)
			// decides instead.
			if prev := runtime.GOMAXPROCS(0); spec.OwnProcess && n < prev && spec.ClientGOMAXPROCS == 0 && os.Getenv("GOMAXPROCS") == "" {
				runtime.GOMAXPROCS(n)
				defer runtime.GOMAXPROCS(prev)
				placement.ClientGOMAXPROCS = n
			}
		}
	}
	if clientCPUs != "" {
		restore, err := pinClient(clientCPUs)
		if err != nil {
			m.fail("pin the client to CPUs %s: %v", clientCPUs, err)
			return
		}
		defer restore()
		placement.ClientCPUs = clientCPUs
	}
	if d := busyPollOf(spec.BusyPoll, placement); d > 0 {
		defer driver.SetBusyPoll(d)()
	}
	if spec.IOUringOff {
		defer driver.SetIOUring(false)()
	}
	if spec.CoalesceOff {
		defer driver.SetCoalesce(false)()
	}
	if n := spec.ClientGOMAXPROCS; n > 0 {
		// after pinning, which sets GOMAXPROCS to the CPUs' count
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
		placement.ClientGOMAXPROCS = n
	}
	if spec.OwnProcess && m.exec == nil {
		// nothing else in the process must answer quickly: the loops
		// block in epoll_wait themselves (driver.SetBlockInKernel); an
		// executor's loops run in its agents
		defer driver.SetBlockInKernel(true)()
	}
	e, err := m.newEngine(ctx)
	if err != nil {
		m.fail("%v", err)
		return
	}
	// The load stops early when the target dies: what follows would only
	// measure connection errors.
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if exited != nil {
		go func() {
			select {
			case <-exited:
				cancel()
			case <-lctx.Done():
			}
		}()
	}
	if err := e.Open(lctx); err != nil {
		m.noteExit()
		m.fail("open connections: %v", err)
		return
	}
	defer e.Close()
	if le, ok := e.(load.Watched); ok && spec.OnEngine != nil {
		spec.OnEngine(le)
	}
	if spec.Phases.Warmup > 0 {
		m.enter("warmup", spec.Phases.Warmup)
		wr, err := e.Run(lctx, load.Window{Duration: spec.Phases.Warmup})
		if err != nil {
			m.fail("warm-up: %v", err)
			return
		}
		m.s.Warmup = &result.WarmupSummary{Seconds: wr.Seconds, Requests: wr.Requests, Failures: wr.Errors + wr.Timeouts + wr.Unexpected,
			Unanswered: wr.Timeouts + wr.OutstandingAtEnd - wr.OutstandingAnswered}
		if wr.Interrupted {
			m.interrupted(ctx)
			return
		}
	}
	m.enter("settle", spec.Phases.Settle)
	if !m.sleep(ctx, spec.Phases.Settle, exited) {
		m.interrupted(ctx)
		return
	}

	// 5. the recorded window, with statistics around it.
	before, beforeErr := m.stats(ctx)
	m.enter(sample.PhaseLoad, spec.Phases.Load)
	res, err := e.Run(lctx, load.Window{Duration: spec.Phases.Load, Requests: spec.Phases.Requests})
	if err != nil {
		m.fail("load: %v", err)
		return
	}
	m.enter(sample.PhaseRecovery, spec.Phases.Recovery)
	m.s.Load = res
	// Close the connections before the closing statistics: PostgreSQL
	// backends publish their counters when they exit (or up to a second
	// later while they live).
	e.Close()
	after, afterErr := m.stats(ctx)
	if before != nil && after != nil {
		m.s.Stats = map[string]float64{}
		for k, v := range after {
			m.s.Stats[k] = v - before[k]
		}
	}
	m.s.Verdict = result.Judge(res, spec.Thresholds)
	// A sample whose statistics could not be read around its window cannot
	// say what the server did: unhealthy, saying why (after Judge, which
	// starts the verdict afresh).
	for _, err := range []error{beforeErr, afterErr} {
		if err != nil {
			m.s.Verdict.Add("target statistics: %v", err)
		}
	}
	if m.sampler != nil || placement.ClientCPUs != "" {
		m.s.Server = &result.Server{Placement: placement}
	}
	if ctx.Err() != nil {
		return // interrupted: no recovery, no post-check
	}
	if m.noteExit() {
		return
	}
	m.sleep(ctx, spec.Phases.Recovery, exited)

	// 6. post-checks: a failure marks the sample unhealthy.
	m.enter("post-check", 0)
	if m.noteExit() {
		return
	}
	for _, c := range spec.PostChecks {
		if err := c.Run(ctx); err != nil {
			m.s.Verdict.Add("post-check %s failed: %v", c.Name, err)
		}
	}
}

// stats snapshots the target's own statistics (nil, nil when it has none).
func (m *measurement) stats(ctx context.Context) (map[string]float64, error) {
	if m.spec.Stats == nil {
		return nil, nil
	}
	return m.spec.Stats.Snapshot(ctx)
}

// finishSampler stops the sampler and derives the server figures.
func (m *measurement) finishSampler() {
	if n := len(m.s.Phases); n > 0 && m.s.Phases[n-1].End.IsZero() {
		m.s.Phases[n-1].End = time.Now().UTC()
	}
	samples := m.sampler.Stop()
	if m.s.Server == nil {
		m.s.Server = &result.Server{}
	}
	var completed int64
	if m.s.Load != nil {
		completed = m.s.Load.Requests
	}
	f := sample.Derive(samples, sample.Window{Phase: sample.PhaseLoad}, completed, proc.OnlineCount())
	m.s.Server.Figures = f
	m.s.Server.Samples = samples
	m.judgeServer()
}

// judgeServer adds the server-side reasons to the verdict: a client that
// could not keep up while the server idled.
func (m *measurement) judgeServer() {
	l := m.s.Load
	if l == nil || l.Rate == nil || m.s.Server == nil {
		return
	}
	f := m.s.Server.Figures
	lagP99 := time.Duration(l.Rate.Lag.P(99)) * time.Microsecond
	if lagP99 > m.spec.Thresholds.P99/2 && f.Cores < 0.5 && f.WindowSeconds > 0 && l.Service != nil &&
		time.Duration(l.Service.P(99))*time.Microsecond < lagP99/4 {
		m.s.Verdict.ClientBound = true
		m.s.Verdict.Add("client could not keep up: schedule lag p99 %s while the server used %.2f cores and answered in p99 %s; the result measures the client",
			result.FormatUS(l.Rate.Lag.P(99)), f.Cores, result.FormatUS(l.Service.P(99)))
	}
}

func (m *measurement) stopTarget() {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	if err := m.tgt.Stop(ctx); err != nil && !errors.Is(err, context.Canceled) {
		m.s.Verdict.Add("stop target: %v", err)
	}
	m.pmu.Lock()
	phase := m.exitPhase
	m.pmu.Unlock()
	m.cg.finish(m.s, phase)
}
