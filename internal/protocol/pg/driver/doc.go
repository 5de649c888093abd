// Package pg is the PostgreSQL driver: pgx v5 connections, one per worker
// and no pool, each with its statements prepared once at Open, reading whole
// rows by primary key along one access path and writing through one update
// statement.
//
// The read paths (see Path) compare ways of fetching k rows: k prepared
// single-key statements (in k round trips or one pipelined batch), one
// prepared statement for all k keys, or the user's own SQL taking the key
// array. Every path returns, inside the timed operation, the rows decoded
// from JSON into Go values in key order, duplicates at each of their
// positions and nil for missing keys; Preflight proves the paths of a suite
// agree before any load.
//
// Path names, as Config.Label gives them:
//
//	prepared-one            k statements "<pk> = $1", one round trip each
//	prepared-one/pipeline   the same k statements in one round trip
//	any[param]              one statement for the k keys: "<pk> = ANY($1::bigint[])",
//	                        one array parameter, as pgx and node-postgres users write it
//	                        (the any path's default form, named in every label)
//	any[array]              one statement "<pk> = ANY(ARRAY[$1,…,$k]::bigint[])",
//	                        k parameters, as pgbench scripts write it
//	any[in]                 one statement "<pk> IN ($1,…,$k)", k parameters
//	sql                     the user's statement (e.g. a batched SQL function) with
//	                        the key array as $1, in any result shape of sqlshape.go
//	update                  the write statement only
//
// so "prepared SQL at 64 keys" in one statement is any[param] (or
// any[array], any[in]) at batch 64, while prepared-one at batch 64 is 64 round trips.
// A plan_cache_mode other than auto (Config.PlanCacheMode, set on every
// connection of the path at connect) adds "/generic" or "/custom".
//
// Plans: pg_prepared_statements is per backend, so Conn.PlanStats and
// Backends.PlanStats (the event loop, one simple query per connection over
// its own socket) read it on every benchmark connection and return the
// generic and custom plan counts of the read and update statements since
// the previous reading, with the plan_cache_mode the connections ran with;
// Plans.AlwaysCustom names the statements the planner ran for on every
// call.
//
// The workload decides, from each operation's global sequence number,
// whether it reads or writes and which keys; Outcome.Op indexes Ops().
//
// Do is the load's hot path (fast.go): the prepared-one (round trips), any,
// sql and update statements run through pgconn with their integer
// parameters (or integer array) encoded in binary into a reused buffer,
// SQL arrays are read in binary, rows are decoded by a one-pass
// decoder that gives encoding/json's values into each row slot's reused
// map, its strings and numbers held in per-connection slabs and cells
// (jsonvalues.go, jsonrow.go: valid until the connection's next request),
// the any path's rows are put at their keys' positions through a reused
// index (keyindex.go), and the per-request timeout is a timer per
// connection (on expiry: a cancel request, then a socket deadline) instead
// of a context per request. Do checks ctx between requests; the engine
// aborts one in flight with Close. Fetch, used by Preflight, keeps pgx and
// encoding/json. The event loop (loop_linux.go) drives every path but
// prepared-one/pipeline with the same encoders and decoder, one write per
// request (the last request's Bind of the same statement and key count
// with the keys patched in, loopbind_linux.go), allocates nothing per
// request in the steady state (alloc_linux_test.go), and refuses a
// backend message longer than Config.MaxMessage (default 64 MiB) as soon
// as its header arrives; pgconn applies the same bound on the
// per-connection path (which allocates inside pgconn, 3 times per
// request). Config.SkipDecode reads rows without parsing their JSON, as
// pgbench does, to measure what decoding costs.
//
// Example:
//
//	d, err := pg.New(pg.Config{
//		DSN:      secret.NewDSN("postgres://bench@127.0.0.1:5432/bench"),
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
