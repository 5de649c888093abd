package history

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// migrations are the schema's versions, in order: migration i brings a
// database from version i to i+1. A released migration is never edited;
// a change is a new one appended. Statements use {{id}} for an
// auto-increment primary key and {{blob}} for bytes, which each dialect
// spells its own way.
var migrations = [][]string{
	// 1: hosts, runs (with the original file, gzip), their targets'
	// provenance, samples (figures and encoded histograms), removed runs.
	{
		`CREATE TABLE hosts (
			fingerprint TEXT PRIMARY KEY,
			cpu_model TEXT NOT NULL,
			cores INTEGER NOT NULL,
			kernel TEXT NOT NULL,
			hostname TEXT NOT NULL)`,
		`CREATE TABLE runs (
			id {{id}},
			file_sha256 TEXT NOT NULL UNIQUE,
			file_name TEXT NOT NULL,
			file_size BIGINT NOT NULL,
			original {{blob}} NOT NULL,
			suite TEXT NOT NULL,
			suite_hash TEXT NOT NULL,
			suite_file_sha256 TEXT NOT NULL,
			branch TEXT NOT NULL,
			host TEXT NOT NULL REFERENCES hosts(fingerprint),
			started TEXT NOT NULL,
			started_ns BIGINT NOT NULL,
			finished TEXT NOT NULL,
			revision TEXT NOT NULL,
			tool_version TEXT NOT NULL,
			samples INTEGER NOT NULL,
			imported TEXT NOT NULL)`,
		`CREATE INDEX runs_series ON runs (suite, branch, host, started_ns)`,
		`CREATE TABLE targets (
			run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
			name TEXT NOT NULL,
			kind TEXT NOT NULL,
			git_revision TEXT NOT NULL,
			git_dirty INTEGER NOT NULL,
			binary_sha256 TEXT NOT NULL,
			version TEXT NOT NULL,
			PRIMARY KEY (run_id, name))`,
		`CREATE TABLE samples (
			run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
			sample_key TEXT NOT NULL,
			cell TEXT NOT NULL,
			variant TEXT NOT NULL,
			case_label TEXT NOT NULL,
			rep INTEGER NOT NULL,
			started TEXT NOT NULL,
			error TEXT NOT NULL,
			req_per_sec DOUBLE PRECISION,
			p50_us BIGINT,
			p90_us BIGINT,
			p99_us BIGINT,
			max_us BIGINT,
			server_us_per_req DOUBLE PRECISION,
			peak_mem_bytes BIGINT,
			client_cores DOUBLE PRECISION,
			errors BIGINT,
			latency_hist TEXT NOT NULL,
			service_hist TEXT NOT NULL,
			PRIMARY KEY (run_id, sample_key))`,
		`CREATE INDEX samples_cell ON samples (cell, variant)`,
		`CREATE TABLE removed (
			run_id BIGINT NOT NULL,
			file_sha256 TEXT NOT NULL,
			suite TEXT NOT NULL,
			started TEXT NOT NULL,
			removed_at TEXT NOT NULL,
			reason TEXT NOT NULL)`,
	},
}

// SchemaVersion is the schema version this benchrig writes.
func SchemaVersion() int { return len(migrations) }

// NewerSchemaError refuses a database written by a newer benchrig.
type NewerSchemaError struct {
	Where        string
	Found, Known int
}

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("history: %s has schema version %d, this benchrig knows versions up to %d: a newer benchrig wrote it; use that benchrig (or a newer one), never an older one, on it", e.Where, e.Found, e.Known)
}

// ddl spells a statement of migrations in the store's dialect.
func (s *Store) ddl(stmt string) string {
	if s.pg {
		return strings.NewReplacer("{{id}}", "BIGSERIAL PRIMARY KEY", "{{blob}}", "BYTEA").Replace(stmt)
	}
	return strings.NewReplacer("{{id}}", "INTEGER PRIMARY KEY AUTOINCREMENT", "{{blob}}", "BLOB").Replace(stmt)
}

// migrate brings the schema to SchemaVersion in one transaction that
// holds every other migrating or importing process off (SQLite: the write
// lock; PostgreSQL: an advisory lock), and refuses a newer database.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.pg {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7306455312)`); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied TEXT NOT NULL)`); err != nil {
		return err
	}
	var v sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_version`).Scan(&v); err != nil {
		return err
	}
	have := int(v.Int64)
	if have > len(migrations) {
		return &NewerSchemaError{Where: s.where, Found: have, Known: len(migrations)}
	}
	if have == len(migrations) {
		return nil // nothing to write: the transaction is rolled back
	}
	for i := have; i < len(migrations); i++ {
		for _, stmt := range migrations[i] {
			if _, err := tx.ExecContext(ctx, s.ddl(stmt)); err != nil {
				return fmt.Errorf("migration to version %d: %w", i+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_version (version, applied) VALUES (?, ?)`), i+1, stamp(time.Now())); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// stamp is t as stored: RFC 3339 in UTC to the nanosecond.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
