// Package pg is the PostgreSQL driver: pgx v5 connections, one per worker
// and no pool, each with its statements prepared once at Open, reading whole
// rows by primary key along one access path and writing through one update
// statement.
//
// The read paths (see Path) compare ways of fetching k rows: k prepared
// single-key statements (in k round trips or one pipelined batch), one
// = ANY($1) statement, or the user's own SQL taking the key array. Every path
// returns, inside the timed operation, the rows decoded from JSON into Go
// values in key order, duplicates at each of their positions and nil for
// missing keys; Preflight proves the paths of a suite agree before any load.
//
// The workload decides, from each operation's global sequence number,
// whether it reads or writes and which keys; Outcome.Op indexes Ops().
//
// Do is the load's hot path (fast.go): the prepared-one (round trips), any
// and update statements run through pgconn with their integer parameter
// encoded in binary into a reused buffer, rows are decoded by a one-pass
// decoder that gives encoding/json's values and reuses each row slot's map,
// and the per-request timeout is a timer per connection (on expiry: a
// cancel request, then a socket deadline) instead of a context per request.
// Do checks ctx between requests; the engine aborts one in flight with
// Close. Fetch, used by Preflight, keeps pgx and encoding/json.
//
// Example:
//
//	d, err := pg.New(pg.Config{
//		DSN:      "postgres://bench@127.0.0.1:5432/bench",
//		Path:     pg.Any,
//		Workload: workload.Config{Kind: workload.Mixed, Batch: 16},
//	})
//	if err != nil {
//		return err
//	}
//	if err := pg.Preflight(ctx, d.Config().DSN, []pg.Config{d.Config()}); err != nil {
//		return err
//	}
//	conn, err := d.Open(ctx, 0)
//	if err != nil {
//		return err
//	}
//	defer conn.Close()
//	out := make([]driver.Outcome, 1)
//	err = conn.Do(ctx, []driver.Request{{Seq: 0}}, out)
package pg
