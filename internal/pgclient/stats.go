package pgclient

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// StatsFlushDelay is how long after its last transaction a PostgreSQL 15+
// backend may hold its statistics before publishing them. Backends publish
// pending counters at the end of a transaction at most once per second
// (PGSTAT_MIN_INTERVAL), and otherwise when they go idle past that interval
// or exit. Read statistics after the sample's connections have closed, or
// this long after the load ends, to see all of its work.
const StatsFlushDelay = time.Second

// Stats are the counters of pg_stat_database for one database at one moment.
// Subtract two with Sub to get a sample's work. The control connection's own
// transactions (TakeStats is one) are counted too.
type Stats struct {
	// At is when the counters were read (the server's clock).
	At time.Time `json:"at"`
	// XactCommit and XactRollback count transactions.
	XactCommit   int64 `json:"xact_commit"`
	XactRollback int64 `json:"xact_rollback"`
	// BlksHit counts block reads served from shared buffers, BlksRead those
	// that went to the kernel.
	BlksHit  int64 `json:"blks_hit"`
	BlksRead int64 `json:"blks_read"`
	// TupReturned counts rows read by sequential scans and index entries
	// read by index scans; TupFetched rows fetched by index scans.
	TupReturned int64 `json:"tup_returned"`
	TupFetched  int64 `json:"tup_fetched"`
	// TupInserted, TupUpdated and TupDeleted count rows written.
	TupInserted int64 `json:"tup_inserted"`
	TupUpdated  int64 `json:"tup_updated"`
	TupDeleted  int64 `json:"tup_deleted"`
}

// Sub returns the counters of s minus those of prev, At kept from s.
func (s Stats) Sub(prev Stats) Stats {
	return Stats{
		At:           s.At,
		XactCommit:   s.XactCommit - prev.XactCommit,
		XactRollback: s.XactRollback - prev.XactRollback,
		BlksHit:      s.BlksHit - prev.BlksHit,
		BlksRead:     s.BlksRead - prev.BlksRead,
		TupReturned:  s.TupReturned - prev.TupReturned,
		TupFetched:   s.TupFetched - prev.TupFetched,
		TupInserted:  s.TupInserted - prev.TupInserted,
		TupUpdated:   s.TupUpdated - prev.TupUpdated,
		TupDeleted:   s.TupDeleted - prev.TupDeleted,
	}
}

// HitRatio is BlksHit ÷ (BlksHit + BlksRead), the share of block reads served
// from shared buffers; 1 when there were none.
func (s Stats) HitRatio() float64 {
	if s.BlksHit+s.BlksRead == 0 {
		return 1
	}
	return float64(s.BlksHit) / float64(s.BlksHit+s.BlksRead)
}

// statsSQL reads the current database's row of pg_stat_database.
const statsSQL = `SELECT clock_timestamp(), xact_commit, xact_rollback, blks_hit, blks_read,
	tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted
	FROM pg_stat_database WHERE datname = current_database()`

// TakeStats reads pg_stat_database for the connection's database.
//
// On PostgreSQL 15 and later it first publishes the calling connection's own
// pending counters (pg_stat_force_next_flush, in a round trip of its own), so
// that work the control connection did just before (a dataset reset: COPY,
// VACUUM, ANALYZE) lands before this reading instead of inside the next
// sample. It then calls pg_stat_clear_snapshot() in the same implicit
// transaction as the read, so that a snapshot cached earlier is never
// returned (stats_fetch_consistency = cache keeps one until the transaction
// ends). It does not wait for other backends to publish theirs: see
// StatsFlushDelay. Each call commits two transactions of its own.
func TakeStats(ctx context.Context, conn *pgx.Conn) (Stats, error) {
	if serverMajor(conn) >= 15 {
		if _, err := conn.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
			return Stats{}, fmt.Errorf("postgres: flush own statistics: %w", err)
		}
	}
	var s Stats
	b := &pgx.Batch{}
	b.Queue("SELECT pg_stat_clear_snapshot()")
	b.Queue(statsSQL).QueryRow(func(row pgx.Row) error {
		return row.Scan(&s.At, &s.XactCommit, &s.XactRollback, &s.BlksHit, &s.BlksRead,
			&s.TupReturned, &s.TupFetched, &s.TupInserted, &s.TupUpdated, &s.TupDeleted)
	})
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return Stats{}, fmt.Errorf("postgres: read pg_stat_database: %w", err)
	}
	return s, nil
}

// serverMajor is the server's major version from the connection's
// server_version parameter; 0 when unknown.
func serverMajor(conn *pgx.Conn) int {
	_, major := ParseVersion("(PostgreSQL) " + conn.PgConn().ParameterStatus("server_version"))
	return major
}
