package run

import (
	"context"
	"fmt"

	"github.com/benchrig/benchrig/internal/suite"
)

// startPostgres prepares a PostgreSQL target of a suite.
func (r *Runner) startPostgres(ctx context.Context, key string, c suite.Cell, t *suite.Target) (*longLived, error) {
	return nil, fmt.Errorf("postgres targets in suites are not wired yet")
}

// startRedis prepares a redis target of a suite.
func (r *Runner) startRedis(ctx context.Context, key string, c suite.Cell, t *suite.Target) (*longLived, error) {
	return nil, fmt.Errorf("redis targets in suites are not wired yet")
}
