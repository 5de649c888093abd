// Package redisephemeral runs an ephemeral redis-server for benchmarks and
// tests: a fresh process on a free loopback port, in its own temporary
// directory and process group, with no persistence, stopped (and its
// directory removed) without leaving anything behind.
//
// A password, when set, is written only to a 0600 configuration file inside
// the temporary directory; it never appears on a command line, in an error or
// in a log.
//
// Example:
//
//	srv, err := redisephemeral.Start(ctx, redisephemeral.Options{Password: token})
//	if err != nil {
//		return fmt.Errorf("start redis-server: %w", err)
//	}
//	defer srv.Stop(context.Background())
//	before, err := srv.Stats(ctx)
//	// … drive load at srv.Addr() …
//	after, err := srv.Stats(ctx)
//	fmt.Println(after.Sub(before).KeyspaceHits, "hits in the window")
package redisephemeral
