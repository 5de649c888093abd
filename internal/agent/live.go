package agent

import (
	"github.com/benchrig/benchrig/internal/load"
)

var _ load.Watched = (*session)(nil)

// maxBucketCount bounds one bucket's count in an agent's live second: more
// requests than any client completes in a second are not believed.
const maxBucketCount = 1 << 40

// Progress is the sample's window in flight on every agent, from their
// latest pings (a fifth of a second old at most): the counts summed, the
// merged load's last complete second with its percentiles from the
// agents' histograms of that second merged losslessly, and each agent's
// part in agent order. It is what a live page shows of a distributed run.
func (s *session) Progress() load.Progress {
	out := load.Progress{Second: load.LiveSecond{T: -1}, Parts: make([]load.Progress, len(s.agents))}
	for i, a := range s.agents {
		p := a.live()
		p.Agent = a.index
		out.Parts[i] = p
		out.Running = out.Running || p.Running
		out.Elapsed, out.Planned = max(out.Elapsed, p.Elapsed), max(out.Planned, p.Planned)
		out.Requests += p.Requests
		out.Failures += p.Failures
		out.Misses += p.Misses
		out.ClientCPU += p.ClientCPU
		out.Second.T = max(out.Second.T, p.Second.T)
	}
	if out.Second.T < 0 {
		return out
	}
	// the second every agent has reached: one that has not handed it
	// over yet would be missing from the merge
	t := out.Second.T
	for _, p := range out.Parts {
		if p.Running {
			t = min(t, p.Second.T)
		}
	}
	if t < 0 {
		out.Second.T = -1
		return out
	}
	h := load.NewSecondHistogram()
	out.Second = load.LiveSecond{T: t}
	for _, p := range out.Parts {
		if p.Second.T != t {
			continue
		}
		out.Second.Requests += p.Second.Requests
		out.Second.Errors += p.Second.Errors
		for j := 0; j+1 < len(p.Second.Buckets); j += 2 {
			if v, n := p.Second.Buckets[j], p.Second.Buckets[j+1]; n > 0 && n <= maxBucketCount {
				_ = h.RecordValues(v, n) // a value out of the histogram's range is refused
			}
		}
	}
	if h.TotalCount() > 0 {
		out.Second.P50US, out.Second.P99US = h.ValueAtQuantile(50), h.ValueAtQuantile(99)
	}
	return out
}
