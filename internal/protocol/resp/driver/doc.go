// Package resp is the RESP2 driver: it drives redis-server, or anything that
// speaks the redis protocol (pg_local_cache's RESP front end, KeyDB, Valkey,
// Dragonfly), with MGET, GET, SET or a custom command template, over TCP
// (optionally TLS) connections, pipelining up to MaxPipeline commands per
// batch.
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
// On Linux the Driver is also a driver.Multiplexer: the engine runs plain
// TCP connections on epoll event loops (loop_linux.go), one goroutine per
// loop, closed loops and constant rates alike (evloop's pacing). Each
// connection is opened and handshaken as Open does, then its socket is
// taken over and driven with raw non-blocking reads and writes: a batch of
// pipelined commands in one write, the replies found whole in what arrived
// (scanner: a reply may be split across reads; the Limits are checked
// before anything of a declared size is allocated) and checked by the same
// code as the goroutine path (codec, reading the reply in place through
// replyBuf): the same classes, messages, hit and nil counts, validation and
// interned server errors. TLS configurations keep a goroutine per
// connection (OpenLoop returns driver.ErrNoLoop).
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
