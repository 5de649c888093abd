// Package resp is the RESP2 driver: it drives redis-server, or anything that
// speaks the redis protocol (pg_local_cache's RESP front end, KeyDB, Valkey,
// Dragonfly), with MGET, GET, SET or a custom command template, over one TCP
// (optionally TLS) connection per worker, pipelining up to MaxPipeline
// commands per Do.
//
// Keys are built from a template ("item:{id}", or
// `CRUD:{db}.public.items:{"id":{id}}`) and key numbers that a workload gives
// per request sequence number. The hot path allocates nothing: commands are
// appended into a reused buffer and replies parsed in place by the codec in
// package internal/resp.
//
// Setup failures (dial, TLS, AUTH, the opening PING) are errors from Open,
// never counted as throughput; per-request failures (server error replies,
// unexpected replies) are Outcomes; a broken connection (closed mid-reply,
// timeout, protocol error) makes Do return an error.
//
// Example:
//
//	cfg := resp.DefaultConfig()
//	cfg.Addr = "127.0.0.1:6379"
//	cfg.Batch = 16
//	cfg.Auth.TokenEnv = "REDIS_PASSWORD"
//	d, err := resp.New(cfg)
//	if err != nil {
//		return err
//	}
//	conn, err := d.Open(ctx, 0)
//	if err != nil {
//		return err
//	}
//	defer conn.Close()
//	out := make([]driver.Outcome, 1)
//	err = conn.Do(ctx, []driver.Request{{Seq: 0}}, out)
//	fmt.Println(out[0].Class, d.Stats().Hits)
package resp
