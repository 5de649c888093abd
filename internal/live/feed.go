package live

import (
	"bytes"
	"maps"
	"time"

	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
)

// maxPoints bounds the per-second points kept of the sample in flight:
// the last hour. Older ones are dropped (the results file keeps them).
const maxPoints = 3600

// PlanItem is one sample of the plan, in the order the run takes them.
type PlanItem struct {
	// ID is the sample's key in the results file (result.Sample.Key,
	// cell#repeat): SampleStarted and SampleFinished name it.
	ID string
	// Label is what the page shows ("64 keys · 4 conns · go, repeat 2").
	Label string
	// Estimate is the planned wall time of the sample (0: unknown, the
	// plan's estimate is then shared evenly).
	Estimate time.Duration
}

// Phase is one planned phase of a sample: its name (baseline, warmup,
// settle, load, recovery) and its planned duration.
type Phase struct {
	Name     string
	Duration time.Duration
}

// PhasesOf are the planned phases of p in the order Measure runs them;
// phases of zero duration are left out.
func PhasesOf(p result.Phases) []Phase {
	var out []Phase
	for _, ph := range []Phase{{"baseline", p.Baseline}, {"warmup", p.Warmup}, {"settle", p.Settle}, {"load", p.Load}, {"recovery", p.Recovery}} {
		if ph.Duration > 0 {
			out = append(out, ph)
		}
	}
	return out
}

// Point is one second of the sample in flight, as the recorder and the
// sampler already compute it.
type Point struct {
	// Offset is when the second ended, since the sample started.
	Offset time.Duration
	// Phase is the phase current at Offset.
	Phase string
	// Requests completed OK in the second; Errors failed (errors,
	// timeouts and unexpected answers); Misses answered without a value.
	Requests, Errors, Misses int64
	// P50US and P99US are the second's latency percentiles in µs (0
	// when no request completed, or when the feeder has no live
	// percentiles: the page then shows none).
	P50US, P99US int64
	// ServerCPU is the target's cumulative user+system CPU seconds;
	// ServerRSS and ServerPSS its memory in bytes (PSS 0: not read).
	ServerCPU            float64
	ServerRSS, ServerPSS uint64
	// ClientCPU is benchrig's own cumulative user+system CPU seconds.
	ClientCPU float64
	// Parts are each agent's share of Requests in a distributed run, in
	// agent order (nil for a local run).
	Parts []Part
}

// Part is one agent's requests completed OK in a second.
type Part struct {
	// Agent is the agent's index, as its log lines and the results
	// file's parts name it.
	Agent    int
	Requests int64
}

// state is what the page shows, changed by the feeding calls under
// Server.mu and read by the renderer.
type state struct {
	title    string
	started  time.Time // the server's start: the run's elapsed time
	plan     []PlanItem
	estimate time.Duration
	// current is the sample in flight ("" between samples).
	current      string
	currentStart time.Time
	phases       []Phase
	points       []Point // the last maxPoints are shown
	finished     []*result.Sample
	// took is how long each sample measured by this run took, by ID:
	// the pace the ETA corrects the plan's estimate by.
	took  map[string]time.Duration
	final []byte // the final report's page, once Finished
	dirty bool
}

// update runs f on the state under the lock and wakes the renderer; it
// never waits for it.
func (s *Server) update(f func(st *state)) {
	s.mu.Lock()
	f(&s.st)
	s.st.dirty = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// SetPlan sets the samples the run will take, in order, and the plan's
// estimate of its wall time. Samples already finished (a resumed run)
// show as done.
func (s *Server) SetPlan(items []PlanItem, estimate time.Duration) {
	items = append([]PlanItem(nil), items...)
	s.update(func(st *state) { st.plan, st.estimate = items, estimate })
}

// SampleStarted says the sample id is in flight, with its planned
// phases; its points start afresh.
func (s *Server) SampleStarted(id string, phases []Phase) {
	phases = append([]Phase(nil), phases...)
	now := time.Now()
	s.update(func(st *state) {
		st.current, st.currentStart, st.phases = id, now, phases
		st.points = st.points[:0]
	})
}

// Tick adds one second of the sample in flight. It only appends under a
// lock: the page is drawn later, by the renderer.
func (s *Server) Tick(p Point) {
	s.update(func(st *state) {
		st.points = append(st.points, p)
		if len(st.points) >= 2*maxPoints {
			// keep the last maxPoints in the same array: amortised O(1)
			st.points = st.points[:copy(st.points, st.points[len(st.points)-maxPoints:])]
		}
	})
}

// SampleFinished adds a finished sample (as written to the results
// file) to the finished table; when it is the one in flight, nothing is
// in flight any more. The caller must not change the sample afterwards.
// A resumed run passes its already finished samples first.
func (s *Server) SampleFinished(sample *result.Sample) {
	if sample == nil {
		return
	}
	now := time.Now()
	s.update(func(st *state) {
		st.finished = append(st.finished, sample)
		if st.current != "" && st.current == sample.Key {
			st.took[sample.Key] = now.Sub(st.currentStart)
			st.current = ""
		}
	})
}

// Finished says the run is over: the page becomes the report of src as
// `benchrig report FILE -o x.html` renders it (src is what
// reportsrc.Load reads from the results file), and open pages reload
// it. The server stays up until Close.
func (s *Server) Finished(src *report.Source) error {
	var b bytes.Buffer
	if err := report.HTML(&b, report.ReportDoc(src)); err != nil {
		return err
	}
	s.update(func(st *state) { st.final, st.current = b.Bytes(), "" })
	return nil
}

// snapshot is a copy of the state for the renderer.
type snapshot struct {
	state
	now time.Time
}

// snapshot copies what the renderer needs and clears dirty.
func (s *Server) snapshot() snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := snapshot{state: s.st, now: time.Now()}
	pts := s.st.points
	if len(pts) > maxPoints {
		pts = pts[len(pts)-maxPoints:]
	}
	sn.points = append([]Point(nil), pts...)
	sn.finished = append([]*result.Sample(nil), s.st.finished...)
	sn.took = maps.Clone(s.st.took)
	// plan and phases are replaced by the feeding calls, never changed
	// in place: the snapshot may share them.
	s.st.dirty = false
	return sn
}
