package suite_test

import (
	"errors"
	"strings"
	"testing"

	_ "github.com/benchrig/benchrig/internal/protocol/all"
	. "github.com/benchrig/benchrig/internal/suite"
)

// seedSuite is a postgres target serving pg and resp; line 4 is its
// postgres mapping, the matrix starts at line 10. Cases replace X.
const seedSuite = `name: t
targets:
  db:
    postgres: {ephemeral: true, resp: {port: 6380}X}
    serves: [pg, resp]
paths:
  one: {pg: {path: prepared-one}}
  mget: {resp: {command: MGET, key: "k:{id}"}, assert: [ASSERT]}
matrix:
  cases: [{target: db, path: one, batches: [1]}, {target: db, path: mget}]
  connections: [4]
  batches: [1, 64]
`

// TestSeedsServerSchema: the fields of the seeds' server are validated
// with their positions.
func TestSeedsServerSchema(t *testing.T) {
	for _, c := range []struct {
		name, x, assert string
		line, col       int
		field, msg      string
	}{
		{"statistics writes", `, statistics: "DELETE FROM t"`, `"errors == 0"`, 4, 66, "targets.db.postgres.statistics", `a statistics query reads: it starts with SELECT, WITH, TABLE or VALUES, got "DELETE"`},
		{"statistics has two statements", `, statistics: "SELECT 1; SELECT 2"`, `"errors == 0"`, 4, 74, "targets.db.postgres.statistics", "one statement only"},
		{"statistics takes a parameter", `, statistics: "SELECT $1"`, `"errors == 0"`, 4, 73, "targets.db.postgres.statistics", "takes no parameters ($1)"},
		{"assertion syntax", ``, `"errors =< 0"`, 8, 65, "paths.mget.assert[0]", `assertion "errors =< 0": unexpected "="`},
		{"assertion name", ``, `"keyspace_hits == 0"`, 8, 58, "paths.mget.assert[0]", `unknown name "keyspace_hits" for resp samples of target "db"`},
		{"info field", `, sidecar: {command: [x]}`, `"errors == 0"`, 4, 1, "", ""}, // valid: checked below
		{"sidecar placeholder", `, sidecar: {command: [x, "{nope}"]}`, `"errors == 0"`, 4, 76, "targets.db.postgres.sidecar.command[1]", "unknown placeholder {nope}"},
		{"sidecar without command", `, sidecar: {env: {A: b}}`, `"errors == 0"`, 4, 53, "targets.db.postgres.sidecar.command", "required"},
		{"reset_sql empty", `, reset_sql: [" "]`, `"errors == 0"`, 4, 65, "targets.db.postgres.reset_sql[0]", "must not be empty"},
	} {
		src := strings.Replace(strings.Replace(seedSuite, "X", c.x, 1), "ASSERT", c.assert, 1)
		_, err := Parse("s.yaml", []byte(src))
		if c.msg == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var es Errors
		if !errors.As(err, &es) {
			t.Errorf("%s: error %v", c.name, err)
			continue
		}
		e := es[0]
		if e.Line != c.line || e.Column != c.col || e.Field != c.field || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%s: %v\nwant s.yaml:%d:%d: %s: …%s…", c.name, err, c.line, c.col, c.field, c.msg)
		}
	}
}

func TestSeedsServerRefusals(t *testing.T) {
	for _, c := range []struct{ name, from, to, want string }{
		{"serves resp without an endpoint", `, resp: {port: 6380}X`, ``, "targets.db.serves: a postgres target serves resp through its RESP endpoint"},
		{"addr and port", `{port: 6380}`, `{port: 6380, addr: "127.0.0.1:1"}`, "targets.db.postgres.resp.port: addr and port are exclusive"},
		{"no addr nor port", `{port: 6380}`, `{token_env: T}`, "targets.db.postgres.resp: needs addr (host:port) or port"},
		{"two tokens", `{port: 6380}`, `{port: 6380, token_env: T, token_file: f}`, "targets.db.postgres.resp.token_file: token_env and token_file are exclusive"},
		{"info name", `{port: 6380}`, `{port: 6380, info: ["a b"]}`, `targets.db.postgres.resp.info[0]: invalid INFO field "a b"`},
		{"case batch outside the matrix", `batches: [1]}`, `batches: [2]}`, "matrix.cases[0].batches[0]: batch 2 is not one of matrix.batches [1 64]"},
	} {
		src := strings.Replace(strings.Replace(seedSuite, c.from, c.to, 1), "X", "", 1)
		src = strings.Replace(src, "ASSERT", `"errors == 0"`, 1)
		_, err := Parse("s.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant …%s…", c.name, err, c.want)
		}
	}
	redis := `name: t
targets:
  c: {redis: {addr: "127.0.0.1:6379", R}}
paths:
  g: {resp: {command: GET, key: "k:{id}"}}
matrix: {targets: [c], paths: [g], connections: [1]}
`
	for _, c := range []struct{ r, want string }{
		{`verify_against_pg: true, fill: false`, "redis.verify_against_pg: needs fill_from_pg, or source_pg with fill: false"},
		{`source_pg: {dsn_env: D}`, "redis.source_pg: needs fill: false"},
		{`fill: false, source_pg: {ephemeral: true}`, "redis.source_pg.ephemeral: a server that fills itself reads an existing PostgreSQL"},
		{`fill: false, verify_against_pg: true, source_pg: {dsn_env: D}, info: [used_memory_rss]`, ""},
	} {
		_, err := Parse("s.yaml", []byte(strings.Replace(redis, "R", c.r, 1)))
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant …%s…", c.r, err, c.want)
		}
	}
}

// TestSeed001Plan: the example suite plans seed 001's matrix: prepared at
// 1 key only, the others at 1 and 64, × 3 repeats.
func TestSeed001Plan(t *testing.T) {
	s, err := Load("../../examples/seeds/001/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range p.Cells {
		ids = append(ids, c.ID)
	}
	want := "pglc/prepared/hot/c=64/b=1 pglc/any/hot/c=64/b=1 pglc/sql-mget/hot/c=64/b=1 pglc/resp-mget/hot/c=64/b=1 " +
		"pglc/any/hot/c=64/b=64 pglc/sql-mget/hot/c=64/b=64 pglc/resp-mget/hot/c=64/b=64"
	if strings.Join(ids, " ") != want || len(p.Samples) != 21 {
		t.Errorf("cells %v (%d samples)\nwant %s (21 samples)", ids, len(p.Samples), want)
	}
	seen := map[string]int{}
	for _, smp := range p.Samples {
		seen[smp.CellID]++
	}
	for _, id := range ids {
		if seen[id] != 3 {
			t.Errorf("%s: %d samples, want 3", id, seen[id])
		}
	}
	if as := s.Assertions(p.Cells[3]); len(as) != 3 || as[0].Field != "targets.pglc.assert[0]" || as[2].Expr.Source != "cache_misses == 0" {
		t.Errorf("assertions of resp-mget: %+v", as)
	}
}

// TestCaseLevels: a case may pick some of the matrix's batches,
// connections and rates; its cells are only those, the other cases keep
// every level, and a pick outside the matrix is refused with its position.
func TestCaseLevels(t *testing.T) {
	src := `name: t
targets:
  db: {postgres: {ephemeral: true}}
paths:
  one: {pg: {path: prepared-one}}
  any: {pg: {path: any}}
matrix:
  cases: [{target: db, path: one, batches: [1], connections: [4], rates: [100]}, {target: db, path: any}]
  connections: [4, 64]
  batches: [1, 64]
  rates: [100, 1000]
`
	s, err := Parse("s.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]int{}
	for _, c := range p.Cells {
		cells[c.Path]++
		if c.Path == "one" && (c.Batch != 1 || c.Connections != 4 || c.Rate != 100) {
			t.Errorf("case one measured at %+v", c)
		}
	}
	if cells["one"] != 1 || cells["any"] != 8 {
		t.Errorf("cells per path %v, want one: 1, any: 2×2×2 = 8", cells)
	}
	for _, c := range []struct{ from, to, want string }{
		{"connections: [4]", "connections: [8]", "s.yaml:8:63: matrix.cases[0].connections[0]: connection count 8 is not one of matrix.connections [4 64]"},
		{"rates: [100]}", "rates: [250]}", "matrix.cases[0].rates[0]: rate 250 is not one of matrix.rates [100 1000]"},
		{"connections: [4]", "connections: []", "matrix.cases[0].connections: empty: the case would have no cells"},
		{"  rates: [100, 1000]\n", "", "matrix.cases[0].rates: matrix.rates is empty (the matrix runs closed loop)"},
	} {
		_, err := Parse("s.yaml", []byte(strings.Replace(src, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: %v\nwant …%s…", c.from, c.to, err, c.want)
		}
	}
}
