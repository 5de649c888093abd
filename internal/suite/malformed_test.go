package suite_test

import (
	"errors"
	"strings"
	"testing"

	_ "github.com/benchrig/benchrig/internal/protocol/all"
	. "github.com/benchrig/benchrig/internal/suite"
)

// okHead is the start of a valid suite; cases append or replace lines so
// that positions are easy to read: line 1 is "name: t".
const okHead = `name: t
targets:
  web: {command: [./srv, "{port}"], port: 8080}
paths:
  hello: {http: {url: "http://127.0.0.1:{port}/"}}
`

const okMatrix = `matrix:
  targets: [web]
  paths: [hello]
  connections: [4]
`

// pgHead defines a postgres target, a redis target, pg and resp paths and
// workloads; the matrix starts at line 13.
const pgHead = `name: t
targets:
  db: {postgres: {ephemeral: true}}
  cache: {redis: {ephemeral: true}}
paths:
  one: {pg: {path: prepared-one}}
  get: {resp: {command: GET, key: "k:{id}"}}
  mget: {resp: {command: MGET, key: "k:{id}"}}
  hello: {http: {url: "http://127.0.0.1:{port}/"}}
workloads:
  hot: {kind: hot, rows: 4096, hot: 128}
  cold: {kind: cold, rows: 4096}
`

// compSuite is a suite whose target app (line 5) is given; db, cache and
// the command target web are beside it.
func compSuite(app string) string {
	return "name: t\ntargets:\n  db: {postgres: {ephemeral: true}}\n  cache: {redis: {ephemeral: true}}\n  app: " + app +
		"\n  web: {command: [./b]}\npaths:\n  one: {pg: {path: prepared-one}}\nmatrix: {targets: [db], paths: [one], connections: [4]}\n"
}

func TestMalformed(t *testing.T) {
	cases := []struct {
		name       string
		yaml       string
		line, col  int
		field, msg string
	}{
		{"unknown top-level key", "name: t\nrepeets: 3\n" + okHead[8:] + okMatrix,
			2, 1, "", `unknown key "repeets"; accepted: arrival, matrix, max_backlog, name, paths, phases, placement, repeats, requests, sampler, search, secret_headers, secret_params, seed, targets, thresholds, timer_slack, workloads`},
		{"unknown nested key", strings.Replace(okHead, "port: 8080", "prot: 8080", 1) + okMatrix,
			3, 37, "targets.web", `unknown key "prot"; accepted: address, assert, attach, checks, command, companions, cpus, dir, env, headline, limits, metrics, params, port, postgres, ready, redis, serves`},
		{"wrong type: string for integer", "name: t\nrepeats: three\n" + okHead[8:] + okMatrix,
			2, 10, "repeats", `must be an integer, got string "three"`},
		{"wrong type: fraction for integer", "name: t\nrepeats: 3.5\n" + okHead[8:] + okMatrix,
			2, 10, "repeats", `must be an integer, got number 3.5`},
		{"wrong type: scalar for list", okHead + strings.Replace(okMatrix, "[4]", "4", 1),
			9, 16, "matrix.connections", `must be a list, got integer 4`},
		{"empty matrix", okHead + strings.Replace(okMatrix, "[4]", "[]", 1),
			9, 3, "matrix.connections", `empty: the matrix has no cells; list at least one connection count`},
		{"empty matrix: no targets", okHead + strings.Replace(okMatrix, "[web]", "[]", 1),
			7, 3, "matrix.targets", `empty: the matrix has no cells; list at least one target`},
		{"negative duration", okHead + okMatrix + "phases: {load: -1s}\n",
			10, 16, "phases.load", `must be ≥ 0, got -1s`},
		{"unparsable duration", okHead + okMatrix + "phases: {warmup: fast}\n",
			10, 18, "phases.warmup", `not a duration: "fast"; accepted: a number of seconds (10, 1.5) or a number with a unit (250ms, 1.5s, 1m)`},
		{"duration of too many seconds", okHead + okMatrix + "phases: {warmup: 1000000}\n",
			10, 18, "phases.warmup", `must be between 0 and 168h0m0s, got 1000000 seconds`},
		{"unknown target", okHead + strings.Replace(okMatrix, "[web]", "[web, api]", 1),
			7, 18, "matrix.targets[1]", `unknown target "api"; defined: web`},
		{"unknown path", okHead + strings.Replace(okMatrix, "[hello]", "[hello, bye]", 1),
			8, 18, "matrix.paths[1]", `unknown path "bye"; defined: hello`},
		{"unknown workload", pgHead + "matrix: {targets: [db], paths: [one], workloads: [warm], connections: [4]}\n",
			13, 51, "matrix.workloads[0]", `unknown workload "warm"; defined: cold, hot`},
		{"duplicate target name", "name: t\ntargets:\n  web: {command: [a]}\n  web: {command: [b]}\n" + okHead[strings.Index(okHead, "paths:"):] + okMatrix,
			4, 3, "targets", `duplicate key "web" (first at 3:3)`},
		{"rate ≤ 0", okHead + okMatrix + "  rates: [100, 0]\n",
			10, 16, "matrix.rates[1]", `must be > 0 requests per second, got 0 (omit rates for closed loop)`},
		{"rate with a cold workload", pgHead + "matrix: {targets: [db], paths: [one], workloads: [cold], connections: [4], rates: [100]}\n",
			13, 84, "matrix.rates[0]", `rate 100 with cold workload "cold": a cold sweep is count-bounded`},
		{"companion: unknown target", strings.Replace(okHead, "port: 8080}", "port: 8080, companions: [{target: db}]}", 1) + okMatrix,
			3, 71, "targets.web.companions[0].target", `unknown target "db"; accepted: none (the suite has no other target)`},
		{"companion: a command target", compSuite(`{command: [./app], companions: [{target: web}]}`),
			5, 49, "targets.app.companions[0].target", `target "web" is a command target: it is started per sample (command) or not sampled (address)`},
		{"companion: found two ways", compSuite(`{command: [./app], companions: [{pid: 1, port: 80}]}`),
			5, 40, "targets.app.companions[0]", `pid and port are exclusive: a companion is found one way`},
		{"companion: dsn_env from redis", compSuite(`{command: [./app], companions: [{target: cache, dsn_env: DATABASE_URL}]}`),
			5, 65, "targets.app.companions[0].dsn_env", `only a postgres companion target has a DSN to pass`},
		{"companion: dsn_env to an attached target", compSuite(`{attach: {pid: 1}, companions: [{target: db, dsn_env: DATABASE_URL}]}`),
			5, 62, "targets.app.companions[0].dsn_env", `the DSN is passed in the environment of a started command; attach target "app" is not started by benchrig`},
		{"companion: tree without port", compSuite(`{command: [./app], companions: [{pid: 7, tree: true}]}`),
			5, 55, "targets.app.companions[0].tree", `tree samples the processes listening on a port: give port, not pid or target`},
		{"companion: duplicate name", compSuite(`{command: [./app], companions: [{target: db}, {name: db, pid: 9}]}`),
			5, 61, "targets.app.companions[1].name", `duplicate companion name "db" (also companions[0]); give each a name`},
		{"headline: unknown process", compSuite(`{command: [./app], companions: [{target: db}], headline: database}`),
			5, 65, "targets.app.headline", `unknown process "database"; accepted: "app" (the target itself, the default) or a companion: "db"`},
		{"skip_decode on the sql path", strings.Replace(pgHead, "one: {pg: {path: prepared-one}}", "one: {pg: {sql: \"SELECT 1\", skip_decode: true}}", 1) + "matrix: {targets: [db], paths: [one], connections: [4]}\n",
			6, 44, "paths.one.pg.skip_decode", `skips decoding the rows of the prepared-one and any paths; path "sql" takes none`},
		{"http path on a postgres target", pgHead + "matrix: {targets: [db], paths: [one, hello], connections: [4]}\n",
			13, 38, "matrix.paths[1]", `path "hello" speaks http but target "db" serves pg; pair targets and paths explicitly with matrix.cases`},
		{"connections < 1", okHead + strings.Replace(okMatrix, "[4]", "[4, 0]", 1),
			9, 20, "matrix.connections[1]", `must be ≥ 1, got 0`},
		{"batches < 1", okHead + okMatrix + "  batches: [0]\n",
			10, 13, "matrix.batches[0]", `must be ≥ 1, got 0`},
		{"batch > 1024 for resp", pgHead + "matrix: {targets: [cache], paths: [mget], connections: [4], batches: [1, 2048]}\n",
			13, 74, "matrix.batches[1]", `must be ≤ 1024 for resp path "mget", got 2048`},
		{"batch with a single-key resp command", pgHead + "matrix: {targets: [cache], paths: [get], connections: [4], batches: [16]}\n",
			13, 70, "matrix.batches[0]", `batch 16 with resp path "get": GET takes one key`},
		{"batch with an http path", okHead + okMatrix + "  batches: [1, 64]\n",
			10, 16, "matrix.batches[1]", `batch 64 with http path "hello": an HTTP request carries no batch; accepted: 1`},
		{"pipeline with a rate", okHead + okMatrix + "  rates: [100]\n  pipeline: [1, 4]\n",
			11, 17, "matrix.pipeline[1]", `pipeline 4 cannot be combined with rates`},
		{"timer slack above 10ms", "name: t\ntimer_slack: 20ms\n" + okHead[8:] + okMatrix,
			2, 14, "timer_slack", `must be 0 (a wake-up for each due time) to 10ms in whole microseconds, got 20ms`},
		{"timer slack finer than a microsecond", "name: t\ntimer_slack: 1500ns\n" + okHead[8:] + okMatrix,
			2, 14, "timer_slack", `in whole microseconds, got 1.5µs`},
		{"pipeline < 1", okHead + okMatrix + "  pipeline: [0]\n",
			10, 14, "matrix.pipeline[0]", `must be ≥ 1, got 0`},
		{"repeats < 1", "name: t\nrepeats: 0\n" + okHead[8:] + okMatrix,
			2, 10, "repeats", `must be ≥ 1, got 0`},
		{"sampler interval < 100ms", okHead + okMatrix + "sampler: {interval: 50ms}\n",
			10, 21, "sampler.interval", `must be ≥ 100ms, got 50ms`},
		{"bad CPU list", okHead + okMatrix + "placement: {client_cpus: \"3-1\"}\n",
			10, 26, "placement.client_cpus", `not a CPU list: "3-1"; accepted: CPU numbers 0–1023 and ranges, e.g. "0", "0-3", "0,2-3"`},
		{"client_gomaxprocs past the runtime's bound", okHead + okMatrix + "placement: {client_gomaxprocs: 5000}\n",
			10, 32, "placement.client_gomaxprocs", `must be between 0 (the default) and 1024 (the Go runtime's bound), got 5000`},
		{"busy_poll past its bound", okHead + okMatrix + "placement: {busy_poll: 2ms}\n",
			10, 24, "placement.busy_poll", `must be between 0 (off) and 1ms, got 2ms`},
		{"busy_poll not a duration", okHead + okMatrix + "placement: {busy_poll: soon}\n",
			10, 24, "placement.busy_poll", `not a busy poll: "soon"; accepted: auto, off, or a duration up to 1ms (20us, 50µs, 0.2ms)`},
		{"io_uring neither auto nor off", okHead + okMatrix + "placement: {io_uring: epoll}\n",
			10, 23, "placement.io_uring", `not an io_uring setting: "epoll"; accepted: auto, off`},
		{"coalesce neither auto nor off", okHead + okMatrix + "placement: {coalesce: 20us}\n",
			10, 23, "placement.coalesce", `not a coalesce setting: "20us"; accepted: auto, off`},
		{"coverage out of range", okHead + okMatrix + "thresholds: {coverage: 101}\n",
			10, 24, "thresholds.coverage", `must be a percentage between 0 and 100, got 101`},
		{"missing command", strings.Replace(okHead, `command: [./srv, "{port}"], `, "", 1) + okMatrix,
			3, 3, "targets.web", `missing command: a command target needs command: [program, args…]; other kinds: postgres, redis, attach, address`},
		{"dsn and ephemeral", strings.Replace(pgHead, "ephemeral: true", "ephemeral: true, dsn: \"host=db\"", 1) + "matrix: {targets: [db], paths: [one], connections: [4]}\n",
			3, 41, "targets.db.postgres.dsn", `dsn and ephemeral are exclusive`},
		{"password in dsn", strings.Replace(pgHead, "ephemeral: true", "dsn: \"postgres://u:hunter2@db/x\"", 1) + "matrix: {targets: [db], paths: [one], connections: [4]}\n",
			3, 24, "targets.db.postgres.dsn", `contains a password; suites are recorded with every result`},
		{"requests < 0", "name: t\nrequests: -5\n" + okHead[8:] + okMatrix,
			2, 11, "requests", `must be ≥ 0 (0 bounds samples by phases.load only), got -5`},
		{"load 0 and requests 0", okHead + okMatrix + "phases: {load: 0}\n",
			10, 16, "phases.load", `must be > 0 unless requests is set: a sample needs a time or a request bound`},
		{"unknown placeholder", strings.Replace(okHead, `"{port}"`, `"{prot}"`, 1) + okMatrix,
			3, 26, "targets.web.command[1]", `unknown placeholder {prot}; accepted: {port}`},
		{"unused param", strings.Replace(okHead, "port: 8080}", "port: 8080, params: {node: [v18, v20]}}", 1) + okMatrix,
			3, 58, "targets.web.params.node", `param "node" is not used: no {node} placeholder`},
		{"hot set larger than rows", pgHead + "  big: {kind: hot, rows: 10, hot: 11}\nmatrix: {targets: [db], paths: [one], workloads: [big], connections: [4]}\n",
			13, 35, "workloads.big.hot", `must be between 1 and rows (10), got 11`},
		{"cases with targets", okHead + okMatrix + "  cases: [{target: web, path: hello}]\n",
			10, 3, "matrix.cases", `cases and targets, paths are exclusive`},
		{"duplicate value in an axis", okHead + strings.Replace(okMatrix, "[4]", "[4, 64, 4]", 1),
			9, 24, "matrix.connections[2]", `duplicate value 4 (also at [0])`},
		{"max_connections below the matrix", strings.Replace(pgHead, "ephemeral: true", "ephemeral: true, max_connections: 100", 1) + "matrix: {targets: [db], paths: [one], connections: [4, 256]}\n",
			3, 53, "targets.db.postgres.max_connections", `must be ≥ 260: the matrix opens up to 256 connections`},
		{"attach by pid and port", strings.Replace(okHead, `{command: [./srv, "{port}"], port: 8080}`, `{attach: {pid: 10, port: 80}}`, 1) + okMatrix,
			3, 9, "targets.web.attach", `pid and port are exclusive`},
		{"unknown alias", okHead + strings.Replace(okMatrix, "[4]", "*conns", 1),
			9, 16, "matrix.connections", `unknown alias *conns: define it first with &conns`},
		{"YAML syntax error", okHead + strings.Replace(okMatrix, "[4]", "[4", 1),
			9, 16, "", `YAML syntax:`},
		{"two documents", okHead + okMatrix + "---\nname: u\n",
			11, 1, "", `expected one YAML document, found 2`},
		{"missing name", okHead[8:] + okMatrix,
			1, 1, "name", `required: a short name for the suite`},
		{"wrong type: mapping for list", okHead + "matrix:\n  targets: {web: 1}\n  paths: [hello]\n  connections: [4]\n",
			7, 12, "matrix.targets", `must be a list, got a mapping`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("suite.yaml", []byte(c.yaml))
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", c.yaml)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not a *Error: %v", err, err)
			}
			if e.File != "suite.yaml" || e.Line != c.line || e.Column != c.col || e.Field != c.field || !strings.Contains(e.Msg, c.msg) {
				t.Errorf("first error:\n got  %s:%d:%d: [%s] %s\n want suite.yaml:%d:%d: [%s] …%s…\nall: %v", e.File, e.Line, e.Column, e.Field, e.Msg, c.line, c.col, c.field, c.msg, err)
			}
			want := ""
			if c.field != "" {
				want = c.field + ": "
			}
			if !strings.HasPrefix(e.Error(), "suite.yaml:") || !strings.Contains(e.Error(), want+e.Msg) {
				t.Errorf("Error() = %q: want file:line:col: field: msg", e.Error())
			}
		})
	}
}

// TestEmptySuite covers a document with nothing in it: no position, a clear
// message.
func TestEmptySuite(t *testing.T) {
	for _, src := range []string{"", "# nothing\n"} {
		_, err := Parse("empty.yaml", []byte(src))
		if err == nil || err.Error() != "empty.yaml: empty suite: expected a mapping with name, targets, paths and matrix" {
			t.Errorf("Parse(%q) = %v", src, err)
		}
	}
}

// TestManyErrors checks that every problem of a file is reported, in file
// order.
func TestManyErrors(t *testing.T) {
	src := "name: t\nrepeats: 0\nrequests: -1\n" + okHead[8:] + strings.Replace(okMatrix, "[4]", "[0]", 1)
	_, err := Parse("s.yaml", []byte(src))
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %T is not Errors: %v", err, err)
	}
	var lines []int
	for _, e := range es {
		lines = append(lines, e.Line)
	}
	if len(es) != 3 || lines[0] != 2 || lines[1] != 3 || lines[2] != 11 {
		t.Errorf("got %d errors at lines %v:\n%v", len(es), lines, err)
	}
}
