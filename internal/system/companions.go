package system

import (
	"context"

	"github.com/benchrig/benchrig/internal/result"
)

// Companion is a process tree sampled beside a sample's target, through
// every phase, and recorded under its own name: the database an
// application uses, say.
type Companion struct {
	// Name labels its figures (suite Companion.CompanionName).
	Name string
	// Target is what is sampled (PID's tree, and AlsoPIDs when it is
	// Companioned); it is neither started nor stopped by the sample.
	Target Target
	// Info describes it in the sample (kind, PID).
	Info *result.TargetInfo
}

// Sampled is implemented by systems that run for the whole run (an
// ephemeral or existing PostgreSQL, a redis-server, an attached process):
// the process tree a sample of another target samples as its companion.
type Sampled interface {
	SampledTarget() (Target, *result.TargetInfo)
}

// DSNSource is implemented by systems with a connection string a
// companion's user is given in its environment (a PostgreSQL server's DSN;
// it may hold a password: it never reaches argv, results or logs).
type DSNSource interface {
	CompanionDSN() string
}

// SampleResetter is implemented by systems whose data is reset before
// every sample of a target that uses them as a companion, as their own
// samples reset it (a PostgreSQL dataset and its reset_sql).
type SampleResetter interface {
	ResetForSample(ctx context.Context) error
}
