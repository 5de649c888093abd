package attach

import (
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/system"
)

var _ system.Sampled = (*System)(nil)

// SampledTarget is the attached process as another target's companion
// (nil for an address target, which is not sampled).
func (a *System) SampledTarget() (system.Target, *result.TargetInfo) {
	if a.proc == nil {
		return nil, nil
	}
	return a.proc, a.info
}
