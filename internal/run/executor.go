package run

import (
	"context"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/system"
)

// LoadEngine is what Measure drives through a sample's warm-up and load
// windows: the local *load.Engine, or a coordinator's handle on the agents
// that run the sample's shares (package agent).
type LoadEngine interface {
	// Open opens every connection (on every agent).
	Open(ctx context.Context) error
	// Run drives one window and returns what it measured (the agents'
	// parts merged).
	Run(ctx context.Context, w load.Window) (*result.Load, error)
	// Close closes the connections; idempotent.
	Close() error
}

var _ LoadEngine = (*load.Engine)(nil)

// Executor makes the LoadEngine of one sample in place of a local engine:
// a distributed run's coordinator sets it in PlanOptions, and the Runner
// (same plan order, phases, target, sampler, verdicts and results file)
// drives the agents through it.
type Executor func(ctx context.Context, spec system.Spec) (LoadEngine, error)

// Annotator is implemented by a LoadEngine that records more in the
// finished sample (a coordinator's agents' parts), also when the sample
// failed.
type Annotator interface {
	Annotate(s *result.Sample)
}

// newEngine makes the sample's engine: the executor's, or a local one.
func (m *measurement) newEngine(ctx context.Context) (LoadEngine, error) {
	if m.exec == nil {
		return load.New(m.spec.Engine, m.spec.Driver)
	}
	e, err := m.exec(ctx, m.spec)
	if err == nil {
		m.eng = e
	}
	return e, err
}

// annotate lets the executor's engine add to the sample.
func (m *measurement) annotate() {
	if a, ok := m.eng.(Annotator); ok {
		a.Annotate(m.s)
	}
}
