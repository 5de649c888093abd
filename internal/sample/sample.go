package sample

import "github.com/benchrig/benchrig/internal/result"

// Phase names that Derive reads. The caller may use other names too (for
// example "warmup" and "settle"); Derive ignores them except for peaks.
const (
	PhaseBaseline = "baseline"
	PhaseLoad     = "load"
	PhaseRecovery = "recovery"
)

// Sample is one reading of the whole process tree. The type lives in
// package result (result.ResourceSample) so results files carry the raw
// samples without the sampler's code; see its fields there.
type Sample = result.ResourceSample
