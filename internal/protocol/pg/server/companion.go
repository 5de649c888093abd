package postgres

import (
	"context"
	"fmt"

	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/system"
)

// A postgres target can be another target's companion: its server's tree
// (sidecar included) is sampled beside the other target's samples, the
// DSN handed to a command target's environment, and the dataset reset
// before each of those samples as before its own.

var (
	_ system.Sampled        = (*System)(nil)
	_ system.DSNSource      = (*System)(nil)
	_ system.SampleResetter = (*System)(nil)
)

// SampledTarget is the server's process tree (with the sidecar's) and its
// description.
func (p *System) SampledTarget() (system.Target, *result.TargetInfo) {
	return p.sampled(), p.srv.Info()
}

// CompanionDSN is the server's DSN (it may hold a password).
func (p *System) CompanionDSN() string { return p.srv.DSN().Reveal() }

// ResetForSample resets the dataset and runs reset_sql.
func (p *System) ResetForSample(ctx context.Context) error {
	if err := p.srv.Reset(ctx); err != nil {
		return fmt.Errorf("reset the dataset: %w", err)
	}
	return p.srv.RunSQL(ctx, "postgres.reset_sql", p.env.Target.Postgres.ResetSQL)
}
