// Package postgres runs PostgreSQL for benchmarks and reads what it has
// done: throwaway servers, DSN handling that never leaks a password, the
// benchmark dataset, per-sample statistics, provenance and pre-flight checks.
//
// StartEphemeral initialises a fresh cluster in a temporary directory and
// starts it on 127.0.0.1 with benchmark settings (fsync, synchronous_commit
// and full_page_writes off, jit off, autovacuum off: the dataset is vacuumed
// on every reset instead), recorded in Server.Settings. As root it runs the
// server as an unprivileged user ("postgres" by default). The postmaster is
// in its own process group and is killed if benchrig dies; Stop ends it and
// every backend and removes the directory.
//
// Statistics come from pg_stat_database, which backends update lazily (see
// StatsFlushDelay): read them after the sample's connections have closed.
//
// Example:
//
//	srv, err := postgres.StartEphemeral(ctx, postgres.Options{MaxConnections: postgres.MaxConnectionsFor(256)})
//	if err != nil {
//		return err
//	}
//	defer srv.Stop(context.Background())
//	conn, err := postgres.Connect(ctx, srv.DSN())
//	if err != nil {
//		return err
//	}
//	defer conn.Close(ctx)
//	if err := postgres.CreateDataset(ctx, conn, postgres.Dataset{}); err != nil {
//		return err
//	}
//	if err := postgres.CheckReserve(ctx, conn, 256); err != nil {
//		return err
//	}
//	before, err := postgres.TakeStats(ctx, conn)
//	// … run the load, close its connections …
//	after, err := postgres.TakeStats(ctx, conn)
//	fmt.Println(after.Sub(before).HitRatio())
package postgres
