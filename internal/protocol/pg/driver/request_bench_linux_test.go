//go:build linux

package pg

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/pgephemeral"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/workload"
)

// benchTable is the seeds' table for BenchmarkRequest64: 4096 rows with a
// 128-byte payload (~165-byte rows), and its batched lookup.
const benchTable = "bench_items"

var benchOnce sync.Once

func benchServer(b *testing.B) string {
	s := needServerB(b)
	benchOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		ctl, err := pgclient.Connect(ctx, s.DSN())
		if err != nil {
			b.Fatal(err)
		}
		defer ctl.Close(context.Background())
		if err := pgclient.CreateDataset(ctx, ctl, pgclient.Dataset{Table: benchTable, Rows: 4096, PayloadBytes: 128}); err != nil {
			b.Fatal(err)
		}
		if _, err := ctl.Exec(ctx, `CREATE OR REPLACE FUNCTION bench_mget(ids bigint[]) RETURNS text[] LANGUAGE sql STABLE AS $$
			SELECT array(SELECT row_to_json(t)::text FROM unnest(ids) WITH ORDINALITY u(id, n) LEFT JOIN `+benchTable+` t USING (id) ORDER BY n)
		$$`); err != nil {
			b.Fatal(err)
		}
	})
	return s.DSN()
}

// needServerB is needServer for a benchmark.
func needServerB(b *testing.B) *pgephemeral.Server {
	srvOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		srv, srvErr = startServer(ctx)
	})
	if srvErr != nil {
		b.Fatal(srvErr)
	}
	return srv
}

// cpuNow is the process's user+system CPU time.
func cpuNow() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRequest64 runs 64-key requests of the seeds' cases as the
// engine does (an event loop of 8 connections, or a goroutine per
// connection when the loop refuses the path) and reports the client's CPU
// per request (client-µs/op: user+system of this process over the
// requests) and which way ran (loop=1).
//
//	go test -bench Request64 -run '^$' ./internal/protocol/pg/driver/
func BenchmarkRequest64(b *testing.B) {
	wl := workload.Config{Kind: workload.Uniform, Batch: 64, Rows: 4096, Seed: 1}
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"sql-array_to_json", Config{Path: SQL, SQL: `SELECT array_to_json(bench_mget($1::bigint[]))`}},
		{"sql-text[]", Config{Path: SQL, SQL: `SELECT bench_mget($1::bigint[])`}},
		{"any", Config{Path: Any}},
		{"any-nodecode", Config{Path: Any, SkipDecode: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := tc.cfg
			cfg.DSN, cfg.Table, cfg.Workload = secret.NewDSN(benchServer(b)), benchTable, wl
			d, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			const conns = 8
			w := &testWork{limit: uint64(b.N)}
			var run func() error
			loop := 0.0
			if l, err := d.OpenLoop(ctx, conns); err == nil {
				defer l.Close()
				loop = 1
				run = func() error { return l.Run(ctx, 1, 0, w) }
			} else if errors.Is(err, driver.ErrNoLoop) {
				var cs []driver.Conn
				for i := 0; i < conns; i++ {
					c, err := d.Open(ctx, i)
					if err != nil {
						b.Fatal(err)
					}
					defer c.Close()
					cs = append(cs, c)
				}
				run = func() error {
					var wg sync.WaitGroup
					for _, c := range cs {
						wg.Add(1)
						go func() {
							defer wg.Done()
							out := make([]driver.Outcome, 1)
							for {
								seq, k := w.Claim(1)
								if k == 0 {
									return
								}
								_ = c.Do(ctx, []driver.Request{{Seq: seq}}, out)
								w.Record(&out[0], 0)
							}
						}()
					}
					wg.Wait()
					return nil
				}
			} else {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu := cpuNow()
			if err := run(); err != nil {
				b.Fatal(err)
			}
			used := cpuNow() - cpu
			b.StopTimer()
			for _, o := range w.outs {
				if o.Class != driver.OK {
					b.Fatalf("outcome %+v", o)
				}
			}
			b.ReportMetric(float64(used.Microseconds())/float64(b.N), "client-µs/op")
			b.ReportMetric(loop, "loop")
		})
	}
}
