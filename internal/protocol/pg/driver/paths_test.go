package pg

import (
	"reflect"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/workload"
)

// The sql path's statements under test, in each accepted result shape.
const (
	sqlJSONArray = `SELECT array_to_json(array(SELECT row_to_json(t) FROM unnest($1::bigint[]) WITH ORDINALITY u(id, n) LEFT JOIN items t USING (id) ORDER BY n))`
	sqlTextArray = `SELECT array(SELECT row_to_json(t)::text FROM unnest($1::bigint[]) WITH ORDINALITY u(id, n) LEFT JOIN items t USING (id) ORDER BY n)`
	sqlJSONBAgg  = `SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY n), '[]') FROM unnest($1::bigint[]) WITH ORDINALITY u(id, n) LEFT JOIN items t USING (id)`
	sqlRows      = `SELECT row_to_json(t) FROM unnest($1::bigint[]) WITH ORDINALITY u(id, n) LEFT JOIN items t USING (id) ORDER BY n`
)

func readConfigs(raw string) []Config {
	wl, dsn := workload.Config{Rows: testRows}, secret.NewDSN(raw)
	return []Config{
		{DSN: dsn, Path: PreparedOne, Workload: wl},
		{DSN: dsn, Path: PreparedOne, BatchMode: Pipeline, Workload: wl},
		{DSN: dsn, Path: Any, Workload: wl},
		{DSN: dsn, Path: SQL, SQL: sqlJSONArray, Workload: wl},
		{DSN: dsn, Path: SQL, SQL: sqlTextArray, Workload: wl},
		{DSN: dsn, Path: SQL, SQL: sqlJSONBAgg, Workload: wl},
		{DSN: dsn, Path: SQL, SQL: sqlRows, Workload: wl},
	}
}

func wantRow(id int64) map[string]any {
	return map[string]any{"id": float64(id), "revision": float64(0), "payload": pgclient.Payload(id, testPayload)}
}

func TestPathsReturnOrderedRows(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	k := func(v int64) *int64 { return &v }
	keys := []*int64{k(42), k(7), k(42), nil, k(999999), k(1), k(testRows)}
	want := []any{wantRow(42), wantRow(7), wantRow(42), nil, nil, wantRow(1), wantRow(testRows)}
	for _, cfg := range readConfigs(s.DSN()) {
		t.Run(cfg.Label()+"/"+shortSQL(cfg.SQL), func(t *testing.T) {
			d, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c, err := d.OpenConn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			got, err := c.Fetch(ctx, keys)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Fetch(%s) =\n%v\nwant\n%v", FormatKeys(keys), got, want)
			}
			for _, probe := range [][]*int64{{}, {nil, nil}} {
				got, err := c.Fetch(ctx, probe)
				if err != nil || len(got) != len(probe) || (len(got) == 2 && (got[0] != nil || got[1] != nil)) {
					t.Errorf("Fetch(%s) = %v, %v", FormatKeys(probe), got, err)
				}
			}
		})
	}
	if err := Preflight(ctx, secret.NewDSN(s.DSN()), readConfigs(s.DSN())); err != nil {
		t.Errorf("Preflight of agreeing paths: %v", err)
	}
}

func shortSQL(sql string) string {
	if len(sql) > 20 {
		return strings.ReplaceAll(sql[:20], " ", "_")
	}
	return sql
}

func TestPreflightFindsDifferences(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	wl := workload.Config{Rows: testRows}
	base := Config{DSN: secret.NewDSN(s.DSN()), Path: Any, Workload: wl}
	for _, tc := range []struct {
		name string
		bad  Config
		want string
	}{
		{"reversed order", Config{Path: SQL, Workload: wl,
			SQL: `SELECT array_to_json(array(SELECT row_to_json(t) FROM unnest($1::bigint[]) WITH ORDINALITY u(id, n) LEFT JOIN items t USING (id) ORDER BY n DESC))`},
			"path sql: batch [42 7 42 null 999999] position 3: row has id 7, want [null]"},
		{"missing rows dropped", Config{Path: SQL, Workload: wl,
			SQL: `SELECT array_to_json(array(SELECT row_to_json(t) FROM items t WHERE id = ANY($1)))`},
			"path sql: batch [42 7 42 null 999999]: sql path returned 2 rows for 5 keys"},
		{"other revision", Config{Path: SQL, Workload: wl,
			SQL: `SELECT array_to_json(array(SELECT CASE WHEN t.id IS NULL THEN NULL ELSE json_build_object('id', t.id, 'revision', 1, 'payload', t.payload) END FROM unnest($1::bigint[]) WITH ORDINALITY u(id, n) LEFT JOIN items t USING (id) ORDER BY n))`},
			`path sql differs from path any[param] in batch [42 7 42 null 999999] at position 0: {"id":42,"payload":"item-42`},
		{"two parameters", Config{Path: SQL, Workload: wl, SQL: `SELECT array_to_json(array(SELECT row_to_json(t) FROM items t WHERE id = ANY($1) AND id < $2))`},
			"takes 2 parameters; it must take exactly one ($1: the key array)"},
		{"two columns", Config{Path: SQL, Workload: wl, SQL: `SELECT id, row_to_json(t) FROM items t WHERE id = ANY($1)`},
			"sql path returned 2 columns, want 1"},
		{"missing table", Config{Path: Any, Table: "itemz", Workload: wl}, `postgres: table "itemz" does not exist`},
		{"wrong rows", Config{Path: Any, Workload: workload.Config{Rows: 4096}}, `postgres: table "items" has 256 rows (ids 1…256), but the workload reads ids 1…4096`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Preflight(ctx, secret.NewDSN(s.DSN()), []Config{base, tc.bad})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Preflight = %v\nwant an error containing %q", err, tc.want)
			}
		})
	}
}
