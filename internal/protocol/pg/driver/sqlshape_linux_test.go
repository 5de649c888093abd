//go:build linux

package pg

import (
	"context"
	"reflect"
	"testing"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/workload"
)

// itemsMget is a batched cache lookup as seed 000 writes one: the rows'
// JSON texts in key order, NULL for a missing key.
const itemsMget = `CREATE OR REPLACE FUNCTION items_mget(ids bigint[]) RETURNS text[] LANGUAGE sql STABLE AS $$
	SELECT array(SELECT row_to_json(t)::text FROM unnest(ids) WITH ORDINALITY u(id, n) LEFT JOIN items t USING (id) ORDER BY n)
$$`

// mgetShapes are items_mget's rows in every result shape the sql path
// reads: its text[] directly, the seeds' array_to_json of it (a JSON array
// of JSON strings), json[], jsonb[], a json array of objects, a jsonb array
// of objects, and one row per key.
var mgetShapes = []struct{ name, sql string }{
	{"text[]", `SELECT items_mget($1::bigint[])`},
	{"array_to_json(text[])", `SELECT array_to_json(items_mget($1::bigint[]))`},
	{"json[]", `SELECT items_mget($1::bigint[])::json[]`},
	{"jsonb[]", `SELECT items_mget($1::bigint[])::jsonb[]`},
	{"json array", `SELECT array_to_json(items_mget($1::bigint[])::json[])`},
	{"jsonb array", `SELECT to_jsonb(items_mget($1::bigint[])::jsonb[])`},
	{"row per key", `SELECT e::json FROM unnest(items_mget($1::bigint[])) WITH ORDINALITY u(e, n) ORDER BY n`},
}

func createMget(t *testing.T) {
	t.Helper()
	ctx := testCtx(t)
	ctl, err := pgclient.Connect(ctx, needServer(t).DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close(context.Background())
	if _, err := ctl.Exec(ctx, itemsMget); err != nil {
		t.Fatal(err)
	}
}

// shapeKeys are 64 keys with duplicates and two missing keys.
func shapeKeys() []int64 {
	keys := make([]int64, 64)
	for i := range keys {
		keys[i] = int64(i*37%testRows + 1)
	}
	keys[5], keys[40] = keys[3], keys[3] // duplicates
	keys[10], keys[63] = 999999, -1      // missing
	return keys
}

// TestSQLShapesAgree: the same 64 keys (duplicates, missing keys) through
// every shape give identical rows, equal to the any path's: on the hot
// path's decoder (readSQLFast, as Do and the loop decode) and through
// Fetch (pgx and encoding/json, the pre-flight's); NULL keys through
// Fetch. Then the shapes pass Preflight together with any.
func TestSQLShapesAgree(t *testing.T) {
	s := needServer(t)
	createMget(t)
	ctx := testCtx(t)
	keys := shapeKeys()
	ptrs := make([]*int64, len(keys))
	for i := range keys {
		ptrs[i] = &keys[i]
	}
	probe := append(append([]*int64{}, ptrs[:8]...), nil, ptrs[10])
	wl := workload.Config{Rows: testRows, Batch: 64}
	ref := openCfg(t, Config{Path: Any, Workload: wl})
	want, err := ref.Fetch(ctx, ptrs)
	if err != nil {
		t.Fatal(err)
	}
	wantProbe, err := ref.Fetch(ctx, probe)
	if err != nil {
		t.Fatal(err)
	}
	if want[10] != nil || want[63] != nil || want[0] == nil || !reflect.DeepEqual(want[5], want[3]) {
		t.Fatalf("reference rows lack the missing or duplicated keys: %v", want)
	}
	paths := []Config{{Path: Any, Workload: wl}}
	for _, sh := range mgetShapes {
		t.Run(sh.name, func(t *testing.T) {
			cfg := Config{Path: SQL, SQL: sh.sql, Workload: wl}
			paths = append(paths, cfg)
			c := openCfg(t, cfg)
			if c.read1 == nil {
				t.Fatal("the hot path does not run this statement")
			}
			got, err := c.Fetch(ctx, ptrs)
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Fetch rows differ from the any path's:\n%v\nwant\n%v", got, want)
			}
			if got, err = c.Fetch(ctx, probe); err != nil || !reflect.DeepEqual(got, wantProbe) {
				t.Errorf("Fetch(%s) = %v, %v\nwant %v", FormatKeys(probe), got, err, wantProbe)
			}
			c.rows = append(c.rows[:0], make([]any, len(keys))...)
			if err := c.readSQLFast(keys); err != nil {
				t.Fatalf("hot path: %v", err)
			}
			if !reflect.DeepEqual(c.rows, want) {
				t.Errorf("hot path rows differ from the any path's:\n%v\nwant\n%v", c.rows, want)
			}
			// A second request reuses the row slots: still the same rows.
			if err := c.readSQLFast(keys[:3]); err != nil || !reflect.DeepEqual(c.rows[:3], want[:3]) {
				t.Errorf("second request: %v, rows %v, want %v", err, c.rows[:3], want[:3])
			}
		})
	}
	if err := Preflight(ctx, secret.NewDSN(s.DSN()), paths); err != nil {
		t.Errorf("Preflight of every shape beside any: %v", err)
	}
}

// TestLoopSQLShapes: every shape runs on the event loop (OpenLoop accepts
// it and every request's rows come from the loop's decoder), and each
// request's rows equal the any path's Fetch of the same keys.
func TestLoopSQLShapes(t *testing.T) {
	createMget(t)
	wl := workload.Config{Kind: workload.Uniform, Batch: 64, Seed: 3}
	ref := openCfg(t, Config{Path: Any, Workload: wl})
	for _, sh := range mgetShapes {
		t.Run(sh.name, func(t *testing.T) {
			d := loopDriver(t, Config{Path: SQL, SQL: sh.sql, Workload: wl})
			onLoop := 0
			w := runLoops(t, d, 1, 2, 20, func(l *loop) {
				l.onRows = func(seq uint64, rows []any) {
					onLoop++
					want, err := fetchRows(testCtx(t), d, ref, seq)
					if err != nil { // on the loop's goroutine: never Fatal
						t.Errorf("seq %d: Fetch: %v", seq, err)
						return
					}
					if !reflect.DeepEqual(rows, want) {
						t.Errorf("seq %d: loop rows differ from the any path's Fetch", seq)
					}
				}
			})
			for _, o := range w.outs {
				if o.Class != driver.OK || o.Bytes <= 0 {
					t.Errorf("outcome %+v, want OK with bytes", o)
				}
			}
			if onLoop != 20 {
				t.Errorf("%d of 20 requests ran on the event loop", onLoop)
			}
		})
	}
}
