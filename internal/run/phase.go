package run

import (
	"context"
	"time"

	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/sample"
)

// A sample's phases: the edge where each starts (the sampler, the control
// groups, the companions, the client and the scraper each take a reading
// there) and the wait inside a phase, cut short by the target's exit.

// enter starts a phase: the sampler takes a sample exactly at its edge.
func (m *measurement) enter(phase string, planned time.Duration) {
	m.pmu.Lock()
	select {
	case <-m.exited: // died in the phase that ends here (the watcher may lag)
		if m.exitPhase == "" {
			m.exitPhase = m.phase
		}
	default:
	}
	m.phase = phase
	m.pmu.Unlock()
	now := time.Now()
	m.phaseAt = now.UTC()
	m.s.Phases = append(m.s.Phases, result.Phase{Name: phase, Start: m.phaseAt})
	if n := len(m.s.Phases); n > 1 {
		m.s.Phases[n-2].End = m.phaseAt
	}
	if phase != "pre-check" && phase != "post-check" { // the checks are not sampled
		if m.sampler != nil {
			var end time.Time // the next phase's mark reads PSS at it; recovery's end has none
			if planned > 0 && phase != sample.PhaseRecovery {
				end = now.Add(planned) // now keeps the monotonic reading the sampler compares; phaseAt (UTC) drops it
			}
			m.sampler.MarkUntil(phase, end)
		}
		m.cg.mark(phase)
		m.markCompanions(phase)
	}
	if m.client != nil {
		m.client.mark(phase)
	}
	m.scraper.Mark(phase)
	if m.spec.OnPhase != nil {
		m.spec.OnPhase(phase, planned)
	}
}

// sleep waits d, or until ctx ends or the target exits; it reports whether
// the measurement should go on (false only on cancellation).
func (m *measurement) sleep(ctx context.Context, d time.Duration, exited <-chan struct{}) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-exited:
		return true
	case <-t.C:
		return true
	}
}
