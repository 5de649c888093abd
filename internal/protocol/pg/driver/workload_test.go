package pg

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/workload"
)

// TestWorkloadsIssueExactKeys drives connections directly, two workers
// taking alternate sequence numbers, and checks every read's rows against the
// workload's keys, every outcome's class and op, and, through pg_stat_database
// and the table itself, exactly the writes the workload defines.
func TestWorkloadsIssueExactKeys(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	ctl := controlConn(t, ctx, s)
	for _, tc := range []struct {
		name string
		cfg  Config
		n    uint64
		// xacts is the number of transactions per read request.
		readXacts int
	}{
		{"hot prepared-one k=4", Config{Path: PreparedOne, Workload: workload.Config{Kind: workload.Hot, Batch: 4}}, 120, 4},
		{"hot any k=16", Config{Path: Any, Workload: workload.Config{Kind: workload.Hot, Batch: 16}}, 100, 1},
		{"mixed pipeline k=4", Config{Path: PreparedOne, BatchMode: Pipeline, Workload: workload.Config{Kind: workload.Mixed, Batch: 4}}, 400, 1},
		{"mixed sql k=16", Config{Path: SQL, SQL: sqlJSONArray, Workload: workload.Config{Kind: workload.Mixed, Batch: 16}}, 200, 1},
		{"mixed any every 4", Config{Path: Any, Workload: workload.Config{Kind: workload.Mixed, Batch: 2, WriteEvery: 4}}, 100, 1},
		{"writes", Config{Workload: workload.Config{Kind: workload.Writes}}, 150, 0},
		{"cold any k=64", Config{Path: Any, Workload: workload.Config{Kind: workload.Cold, Batch: 64}}, testRows / 64, 1},
		{"uniform sql-rows k=8", Config{Path: SQL, SQL: sqlRows, Workload: workload.Config{Kind: workload.Uniform, Batch: 8, Seed: 3}}, 50, 1},
		{"zipf prepared-one k=8", Config{Path: PreparedOne, Workload: workload.Config{Kind: workload.Zipf, Batch: 8, Seed: 9}}, 50, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.DSN = secret.NewDSN(s.DSN())
			tc.cfg.Workload.Rows = testRows
			d, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			wl := d.Workload()
			if err := pgclient.ResetDataset(ctx, ctl, pgclient.Dataset{Rows: testRows, PayloadBytes: testPayload}); err != nil {
				t.Fatal(err)
			}
			before, err := pgclient.TakeStats(ctx, ctl)
			if err != nil {
				t.Fatal(err)
			}
			var conns [2]*Conn
			for i := range conns {
				if conns[i], err = d.OpenConn(ctx); err != nil {
					t.Fatal(err)
				}
			}
			wantWrites := make(map[int64]int64)
			reads, writes := 0, 0
			out := make([]driver.Outcome, 1)
			for seq := uint64(0); seq < tc.n; seq++ {
				c := conns[seq%2]
				if err := c.Do(ctx, []driver.Request{{Seq: seq}}, out); err != nil {
					t.Fatalf("seq %d: Do: %v", seq, err)
				}
				op, keys := wl.Keys(seq, nil)
				o := out[0]
				if o.Class != driver.OK || int(o.Op) >= len(d.Ops()) || d.Ops()[o.Op] != op.String() || o.Done == 0 {
					t.Fatalf("seq %d: outcome %+v for a %v (ops %v)", seq, o, op, d.Ops())
				}
				if op == workload.Write {
					writes++
					wantWrites[keys[0]]++
					continue
				}
				reads++
				if o.Bytes <= 0 {
					t.Errorf("seq %d: read of %d rows reports %d bytes", seq, len(keys), o.Bytes)
				}
				for i, k := range keys {
					row, _ := c.rows[i].(map[string]any)
					if row["id"] != float64(k) {
						t.Fatalf("seq %d key %d: row %v, want id %d", seq, i, c.rows[i], k)
					}
				}
			}
			for _, c := range conns {
				if err := c.Close(); err != nil {
					t.Error(err)
				}
				if err := c.Close(); err != nil {
					t.Errorf("second Close: %v", err)
				}
			}
			// Closed backends publish their counters as they exit.
			minXacts := int64(reads*tc.readXacts + writes)
			delta := waitStats(t, ctl, before, func(d pgclient.Stats) bool {
				return d.TupUpdated >= int64(writes) && d.XactCommit >= minXacts
			})
			if delta.TupUpdated != int64(writes) {
				t.Errorf("tup_updated delta %d, want %d writes", delta.TupUpdated, writes)
			}
			if delta.XactCommit < minXacts || delta.XactCommit > minXacts+40 {
				t.Errorf("xact_commit delta %d, want %d (+ a few for connecting and the control connection)", delta.XactCommit, minXacts)
			}
			if kind := tc.cfg.Workload.Kind; kind == workload.Mixed {
				every := tc.cfg.Workload.WriteEvery
				if every == 0 {
					every = workload.DefaultWriteEvery
				}
				if writes != int(tc.n)/every {
					t.Errorf("%d writes in %d operations, want 1 in %d", writes, tc.n, every)
				}
			}
			checkRevisions(t, ctl, wantWrites)
			if err := pgclient.ResetDataset(ctx, ctl, pgclient.Dataset{Rows: testRows, PayloadBytes: testPayload}); err != nil {
				t.Fatal(err)
			}
			checkRevisions(t, ctl, nil)
		})
	}
}

// waitStats polls pg_stat_database until done accepts the delta since
// before (the closed backends have published their counters), bounded; the
// caller asserts on what it returns.
func waitStats(t *testing.T, ctl *pgx.Conn, before pgclient.Stats, done func(pgclient.Stats) bool) pgclient.Stats {
	t.Helper()
	ctx := testCtx(t)
	deadline := time.Now().Add(3*pgclient.StatsFlushDelay + 5*time.Second)
	for {
		after, err := pgclient.TakeStats(ctx, ctl)
		if err != nil {
			t.Fatal(err)
		}
		d := after.Sub(before)
		if done(d) || time.Now().After(deadline) {
			return d
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkRevisions compares every row's revision with the writes expected.
func checkRevisions(t *testing.T, ctl *pgx.Conn, want map[int64]int64) {
	t.Helper()
	rows, err := ctl.Query(testCtx(t), "SELECT id, revision FROM items WHERE revision <> 0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[int64]int64)
	for rows.Next() {
		var id, rev int64
		if err := rows.Scan(&id, &rev); err != nil {
			t.Fatal(err)
		}
		got[id] = rev
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if len(got) != len(want) {
		t.Errorf("%d rows have revisions, want %d", len(got), len(want))
	}
	for id, n := range want {
		if got[id] != n {
			t.Errorf("row %d revision %d, want %d", id, got[id], n)
		}
	}
}
