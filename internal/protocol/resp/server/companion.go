package redis

import (
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/system"
)

var _ system.Sampled = (*System)(nil)

// SampledTarget is the redis-server's process (the ephemeral one, or an
// existing one found on this machine) as another target's companion.
func (r *System) SampledTarget() (system.Target, *result.TargetInfo) {
	return r.srv, r.srv.Info()
}
