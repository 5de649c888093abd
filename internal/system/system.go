package system

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
)

// System is one system under test of a run: a suite target (one variant of
// its params) behind the small interface the runner asks for. The runner
// calls Prepare once, Spec once per sample, and Close once at the end.
type System interface {
	// Prepare readies the system for its cells (long-lived servers started
	// or reached, datasets loaded, pre-flight checks passed) and returns
	// its provenance (binary hash, versions, settings, query plans).
	Prepare(ctx context.Context) (result.Provenance, error)
	// Spec completes the spec of one sample of cell c: the driver, how the
	// target is started or attached, checks, statistics and the driver's
	// part of the recorded configuration. base holds what the runner
	// fills (key, engine, phases, thresholds, sampler).
	Spec(ctx context.Context, c suite.Cell, base Spec) (Spec, error)
	// Close stops what Prepare started. It may be called more than once.
	Close(ctx context.Context) error
}

// Env is what a System is made from: the suite, the target variant and the
// cells of the plan it serves.
type Env struct {
	// Suite is the resolved suite.
	Suite *suite.Suite
	// Name is the target variant's name: the target name with its params
	// ("node-http[node=node20]").
	Name string
	// Target is the suite's definition; Params its variant's values.
	Target *suite.Target
	Params map[string]string
	// Cells are the plan's cells on this variant, in plan order.
	Cells []suite.Cell
	// LogDir is the run's directory for target logs (removed at the end).
	LogDir string
	// CompanionEnv are NAME=value pairs added to the environment of a
	// started target: its companions' DSNs (suite Companion.DSNEnv).
	CompanionEnv []string
	// Notes, if set, receives progress notes (a fill, a pre-flight).
	Notes func(format string, args ...any)
	// RunEnv, if set, holds variables the run keeps for itself, read in
	// place of the process environment's by Getenv (a quick run's DSN
	// under its dsn_env): never set in the environment, so never seen by
	// a child and never shared between runs in one process.
	RunEnv map[string]string
}

// Getenv reads the variable a suite's *_env field names: the run's own
// RunEnv first, then the process environment.
func (e Env) Getenv(name string) string {
	if v, ok := e.RunEnv[name]; ok {
		return v
	}
	return os.Getenv(name)
}

// Note passes a progress note on, if anyone listens.
func (e Env) Note(format string, args ...any) {
	if e.Notes != nil {
		e.Notes(format, args...)
	}
}

// MaxConnections is the largest connection count of the env's cells.
func (e Env) MaxConnections() int {
	n := 0
	for _, c := range e.Cells {
		n = max(n, c.Connections)
	}
	return n
}

// Vars returns the placeholders of the variant (its params) plus extra.
func (e Env) Vars(extra map[string]string) map[string]string {
	v := maps.Clone(e.Params)
	if v == nil {
		v = map[string]string{}
	}
	maps.Copy(v, extra)
	return v
}

// Factory makes the System of one target variant. It must not start
// anything: Prepare does.
type Factory func(env Env) (System, error)

var (
	mu        sync.RWMutex
	factories = map[string]Factory{}
)

// Register makes kind (a suite target kind) available to runners. It panics
// on a kind registered twice, a programming error found by the first test
// that runs; a test walks suite.Capabilities against Kinds.
func Register(kind string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := factories[kind]; dup {
		panic(fmt.Sprintf("system.Register: kind %q registered twice", kind))
	}
	factories[kind] = f
}

// Kinds returns the registered kinds, sorted.
func Kinds() []string {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Sorted(maps.Keys(factories))
}

// New makes the System of a target variant from its registered factory.
func New(env Env) (System, error) {
	kind := env.Target.Kind()
	mu.RLock()
	f, ok := factories[kind]
	mu.RUnlock()
	if !ok {
		known := Kinds()
		sort.Strings(known)
		return nil, fmt.Errorf("target %q: kind %q has no runner here (registered: %s)", env.Name, kind, strings.Join(known, ", "))
	}
	return f(env)
}

// Unsupported is the error of a Spec asked for a protocol its kind does not
// serve; suite validation refuses such pairings first, so it means the
// capability table and the implementation disagree.
func Unsupported(env Env, c suite.Cell) error {
	return fmt.Errorf("target %q (%s) has no %s driver for path %q: suite.Capabilities and the %s system disagree",
		env.Name, env.Target.Kind(), c.Protocol, c.Path, env.Target.Kind())
}
