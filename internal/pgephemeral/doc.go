// Package pgephemeral runs throwaway PostgreSQL servers for benchmarks and
// tests: it finds the server binaries, initialises a fresh cluster in a
// temporary directory and starts it, and stops it without leaving anything
// behind. Talking to a server (connecting, the dataset, statistics) is
// package pgclient's.
//
// StartEphemeral initialises a fresh cluster in a temporary directory and
// starts it on 127.0.0.1 with benchmark settings (fsync, synchronous_commit
// and full_page_writes off, jit off, autovacuum off: the dataset is vacuumed
// on every reset instead), recorded in Server.Settings. As root it runs the
// server as an unprivileged user ("postgres" by default). The postmaster is
// in its own process group and is killed if benchrig dies; Stop ends it and
// every backend and removes the directory.
//
// Example:
//
//	srv, err := pgephemeral.StartEphemeral(ctx, pgephemeral.Options{MaxConnections: pgephemeral.MaxConnectionsFor(256)})
//	if err != nil {
//		return err
//	}
//	defer srv.Stop(context.Background())
//	conn, err := pgclient.Connect(ctx, srv.DSN())
package pgephemeral
