// Package pgclient is benchrig's PostgreSQL client side, below the drivers
// and the server kinds: connecting with DSN handling that never leaks a
// password, identifiers, the benchmark dataset, per-sample statistics,
// server information, EXPLAIN and pre-flight checks. Running a server is
// package pgephemeral's.
//
// Statistics come from pg_stat_database, which backends update lazily (see
// StatsFlushDelay): read them after the sample's connections have closed.
//
// Example:
//
//	conn, err := pgclient.Connect(ctx, dsn)
//	if err != nil {
//		return err
//	}
//	defer conn.Close(ctx)
//	if err := pgclient.CreateDataset(ctx, conn, pgclient.Dataset{}); err != nil {
//		return err
//	}
//	if err := pgclient.CheckReserve(ctx, conn, 256); err != nil {
//		return err
//	}
//	before, err := pgclient.TakeStats(ctx, conn)
//	// … run the load, close its connections …
//	after, err := pgclient.TakeStats(ctx, conn)
//	fmt.Println(after.Sub(before).HitRatio())
package pgclient
