package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	pgdrv "github.com/benchrig/benchrig/internal/driver/pg"
	runner "github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/target/postgres"
)

// prepare fills the keyspace before the first sample, from generated demo
// rows or from PostgreSQL, verifies it against PostgreSQL when asked, and
// returns the rows filled as the reference of --validate-sampled (nil
// without a fill). An ephemeral PostgreSQL is stopped before the load, so
// that it takes no CPU from the measurement.
func (rf *respFlags) prepare(ctx context.Context, c *cobra.Command, srv *runner.RedisServer, stderr io.Writer) (func(int64) ([]byte, bool), error) {
	if !rf.fills(c) {
		if rf.sampled > 0 {
			return nil, usagef("--validate-sampled compares with the rows benchrig filled: give --fill or a PostgreSQL fill")
		}
		return nil, nil
	}
	tmpl := strings.ReplaceAll(rf.key, "{db}", rf.db)
	if strings.Contains(rf.key, "{db}") && rf.db == "" {
		return nil, usagef("--key %q uses {db}: give --db", rf.key)
	}
	start := time.Now()
	if !rf.usePG() {
		n, err := srv.Fill(ctx, runner.DemoRows(rf.keySpace, postgres.DefaultPayloadBytes), tmpl)
		if err != nil {
			return nil, err
		}
		rf.note(stderr, "Filled %d keys (%s, generated demo rows) in %s\n", n, tmpl, respSince(start))
		if rf.sampled == 0 {
			return nil, nil
		}
		return runner.Reference(runner.DemoRows(rf.keySpace, postgres.DefaultPayloadBytes), rf.keySpace)
	}

	dsn, source := rf.pgDSN, "PostgreSQL "+postgres.Redact(rf.pgDSN)
	if rf.ephemeralPG {
		if rf.pgPK != "id" {
			return nil, usagef("--pg-pk: the --ephemeral-pg demo table's key is id, not %q", rf.pgPK)
		}
		pgs, err := runner.StartPG(ctx, runner.PGOptions{Ephemeral: true, MaxConnections: postgres.MaxConnectionsFor(1),
			Dataset: postgres.Dataset{Table: rf.pgTable, Rows: rf.rows}})
		if err != nil {
			return nil, fmt.Errorf("start the ephemeral PostgreSQL: %w", err)
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := pgs.Stop(sctx); err != nil {
				fmt.Fprintln(stderr, "benchrig: stop the ephemeral PostgreSQL:", err)
			}
		}()
		if err := pgs.Prepare(ctx, []pgdrv.Config{{Path: pgdrv.Any, PK: rf.pgPK}}, 1); err != nil {
			return nil, fmt.Errorf("prepare the ephemeral PostgreSQL: %w", err)
		}
		dsn, source = pgs.DSN(), fmt.Sprintf("the ephemeral PostgreSQL (%d rows)", rf.rows)
	}
	n, err := srv.FillFromPG(ctx, dsn, rf.pgTable, rf.pgPK, tmpl)
	if err != nil {
		return nil, fmt.Errorf("fill from %s: %w", source, err)
	}
	rf.note(stderr, "Filled %d keys (%s) from table %s of %s in %s\n", n, tmpl, rf.pgTable, source, respSince(start))
	if int64(n) < rf.keySpace {
		rf.note(stderr, "Note: the keyspace has %d keys and the table %d rows: the keys beyond are missing (nil replies)\n", rf.keySpace, n)
	}
	if rf.verifyPG {
		ids := runner.ProbeIDs(rf.keySpace)
		if err := srv.VerifyAgainstPG(ctx, dsn, rf.pgTable, rf.pgPK, rf.key, rf.db, ids); err != nil {
			return nil, fmt.Errorf("pre-flight: %w", err)
		}
		rf.note(stderr, "Pre-flight: MGET of %d keys returned exactly the rows PostgreSQL returns for them\n", len(ids))
	}
	if rf.sampled == 0 {
		return nil, nil
	}
	ref, err := runner.Reference(runner.PGRows(ctx, dsn, rf.pgTable, rf.pgPK, rf.keySpace), rf.keySpace)
	if err != nil {
		return nil, fmt.Errorf("read the reference rows from %s: %w", source, err)
	}
	return ref, nil
}

// note prints a progress note on stderr, unless the JSON goes to stdout.
func (rf *respFlags) note(stderr io.Writer, format string, args ...any) {
	if !rf.json {
		fmt.Fprintf(stderr, format, args...)
	}
}

func respSince(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }
