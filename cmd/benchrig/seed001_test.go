package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// seedServer builds the in-repo RESP sidecar (examples/servers/respcache)
// and returns PATH=… with its directory first, as the example suite
// expects it.
func seedServer(t *testing.T) string {
	t.Helper()
	pgNeedBinaries(t)
	bin := buildExample(t, "respcache")
	return "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
}

// respcacheBin returns the sidecar's path (examples/servers/respcache,
// built once), for suites that name it by its path: those set no
// environment, and run beside the other parallel tests.
func respcacheBin(t *testing.T) string {
	t.Helper()
	pgNeedBinaries(t)
	return buildExample(t, "respcache")
}

// TestSeed001Smoke runs examples/seeds/001/suite.yaml in smoke mode: one
// PostgreSQL target serving prepared SQL, ANY, a sql path calling the
// function init_sql created, and RESP MGET through the sidecar; every
// sample is healthy, the resp samples record the server's own counters
// (cache_hits = requests × keys, which their assertion checks) beside the
// INFO fields and the driver's, the pg samples the pg_stat deltas beside
// the statistics query's columns, the token is nowhere in the file, and
// verify --allow-smoke accepts it.
func TestSeed001Smoke(t *testing.T) {
	t.Parallel() // a built benchrig, with its own environment
	path := seedServer(t)
	const token = "seed001-test-token-7f3a"
	res := filepath.Join(t.TempDir(), "seed001.json")
	out, stderr, code := runBuilt(t, ".", []string{path, "RESPCACHE_TOKEN=" + token}, "run", "../../examples/seeds/001/suite.yaml", "-o", res, "--smoke")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	// Probe MGETs no larger than the suite's largest batch (64).
	if !strings.Contains(stderr+out, "Pre-flight: MGETs of 4098 keys (at most 64 each) returned exactly the rows PostgreSQL returns") {
		t.Errorf("no verify_against_pg pre-flight note:\n%s%s", out, stderr)
	}
	doc := readResults(t, res)
	if len(doc.Samples) != 7 {
		t.Fatalf("%d samples, want 7 (prepared at 1 key; any, sql-mget and resp-mget at 1 and 64)", len(doc.Samples))
	}
	seen := map[string]bool{}
	for _, s := range doc.Samples {
		seen[s.Cell] = true
		// Latency bounds depend on this shared machine's noise; the
		// assertions and the counters do not. A request sent and never
		// answered (outstanding at a window's end past the drain, on a
		// busy machine) may have been counted by the server or not: the
		// judge tries requests counting k of them (system.JudgeAssertions).
		if s.Error != "" || s.Load == nil {
			t.Errorf("%s: error %q, load %+v", s.Cell, s.Error, s.Load)
			continue
		}
		if s.Load.Requests == 0 || s.Load.Errors != 0 || strings.Contains(strings.Join(s.Verdict.Reasons, "\n"), "assertion") {
			t.Errorf("%s: error %q, verdict %+v; %d requests, %d outstanding at the end, %d of them answered, %d unanswered, reconnects %v; stats %v, assertions %+v",
				s.Cell, s.Error, s.Verdict, s.Load.Requests, s.Load.OutstandingAtEnd, s.Load.OutstandingAnswered, s.Unanswered(), s.Load.ReconnectCauses, s.Stats, s.Assertions)
			continue
		}
		if s.Server == nil || s.Server.Figures.WindowSeconds == 0 {
			t.Errorf("%s: the PostgreSQL server was not sampled: %+v", s.Cell, s.Server)
		}
		keys := float64(s.Config.Cell.Batch)
		switch s.Protocol {
		case "resp":
			// The assertion's requests count the requests outstanding at
			// the window's end that the server answered in the drain; the
			// server's counters (its table, and INFO read a moment
			// later) may count some of the unanswered too, whole requests.
			want, u := float64(s.Load.Requests+s.Load.OutstandingAnswered)*keys, float64(s.Unanswered())
			hits := s.Stats["cache_hits"]
			for _, f := range []string{"cache_hits", "keyspace_hits"} {
				if v := s.Stats[f]; v < want || v > want+u*keys || math.Mod(v, keys) != 0 {
					t.Errorf("%s: %s = %v, want %v + a multiple of %v up to %v unanswered requests", s.Cell, f, v, want, keys, u)
				}
			}
			if s.Stats["cache_misses"] != 0 || s.Stats["client_hits"] != want {
				t.Errorf("%s: stats %v, want no misses and client_hits = %v", s.Cell, s.Stats, want)
			}
			values := fmt.Sprintf("cache_hits = %d, requests * keys = %d", int64(hits), int64(hits))
			if hits != want {
				values += fmt.Sprintf(" (requests counts %d of the %d sent and never answered)", int64((hits-want)/keys), int64(u))
				t.Logf("%s: %s", s.Cell, values)
			}
			if len(s.Assertions) != 3 || !s.Assertions[1].Holds || s.Assertions[1].Expr != "cache_hits == requests * keys" || s.Assertions[1].Values != values {
				t.Errorf("%s: assertions recorded %+v, want %q", s.Cell, s.Assertions, values)
			}
			if _, ok := s.Stats["xact_commit"]; ok {
				t.Errorf("%s: a resp sample records pg_stat deltas of the sidecar's backends: %v", s.Cell, s.Stats)
			}
		case "pg":
			if s.Stats["xact_commit"] <= 0 || s.Stats["cache_hits"] != 0 {
				t.Errorf("%s: stats %v, want pg_stat deltas and the statistics query's columns (0 hits: SQL does not go through the sidecar)", s.Cell, s.Stats)
			}
		}
	}
	for _, cell := range []string{"pglc/prepared/hot/c=64/b=1", "pglc/sql-mget/hot/c=64/b=1", "pglc/sql-mget/hot/c=64/b=64", "pglc/resp-mget/hot/c=64/b=64"} {
		if !seen[cell] {
			t.Errorf("no sample of %s (the sql path calls items_mget, which init_sql created)", cell)
		}
	}
	if seen["pglc/prepared/hot/c=64/b=64"] {
		t.Errorf("prepared ran at 64 keys; its case says batches: [1]")
	}
	b, _ := os.ReadFile(res)
	if strings.Contains(string(b), token) {
		t.Errorf("the AUTH token is in the results file")
	}
	if out, _, code := invoke(t, "verify", "--allow-smoke", res); code != 0 {
		t.Errorf("verify --allow-smoke: exit %d: %s", code, out)
	}
}

// seedSuite writes a one-target suite around the sidecar: the target's
// extra postgres lines, one resp path with assertions, c=4, b=64.
func seedSuite(t *testing.T, dir, extra, assert string) string {
	t.Helper()
	src := fmt.Sprintf(`name: seed-miss
repeats: 1
phases: {warmup: 300ms, load: 700ms}
targets:
  pglc:
    serves: [resp]
    postgres:
      ephemeral: true
%s
paths:
  mget:
    resp: {command: MGET, key: "item:{id}"}
    assert: [%s]
workloads:
  hot: {kind: hot, rows: 512, hot: 64}
matrix:
  cases: [{target: pglc, path: mget, workload: hot}]
  connections: [4]
  batches: [64]
`, extra, assert)
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestSeedAssertionFails: the sidecar misses 1 key in 100; the 100 %-hits
// assertion fails, the sample is UNHEALTHY and the verdict shows the
// expression and both numbers. The AUTH token comes from a token file here.
func TestSeedAssertionFails(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	respcache := respcacheBin(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "resp.token")
	os.WriteFile(tokenFile, []byte("file-token-42\n"), 0o600)
	extra := fmt.Sprintf(`      statistics: "SELECT coalesce(sum(hits), 0)::bigint AS cache_hits, coalesce(sum(misses), 0)::bigint AS cache_misses FROM respcache_counters"
      sidecar:
        command: [%q, -listen, "127.0.0.1:{port}", -token-file, %q, -miss-every, "100"]
      resp: {token_file: %q}`, respcache, tokenFile, tokenFile)
	file := seedSuite(t, dir, extra, `"cache_hits == requests * keys", "errors == 0"`)
	res := filepath.Join(dir, "r.json")
	out, stderr, code := invoke(t, "run", file, "-o", res)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	s := readResults(t, res).Sample
	if s.Verdict.Healthy || s.Load == nil || s.Load.Errors != 0 {
		t.Fatalf("verdict %+v, load %+v", s.Verdict, s.Load)
	}
	// Every MGET the server answered (in the window: a value for every
	// key, or a miss; or after it, in the drain) counted its 64 keys.
	l := s.Load
	all := float64(l.Requests+l.Misses+l.OutstandingAnswered) * 64
	hits, misses := s.Stats["cache_hits"], s.Stats["cache_misses"]
	if hits+misses != all || misses == 0 || l.Misses == 0 || hits != s.Stats["client_hits"] {
		t.Fatalf("stats %v, %d misses: want hits + misses = answered MGETs × keys = %v, some misses, hits = client_hits", s.Stats, l.Misses, all)
	}
	// The assertion reads the requests answered with every value.
	want := float64(l.Requests+l.OutstandingAnswered) * 64
	reason := fmt.Sprintf(`assertion "cache_hits == requests * keys" failed: cache_hits = %d, requests * keys = %d`, int64(hits), int64(want))
	// The suite asserts hits: no read may miss (max_miss 0), the misses
	// are a reason of their own.
	// A busy machine may add its own reasons (a late request over p99):
	// those are set aside, the two this test makes must both be there.
	var reasons []string
	for _, r := range s.Verdict.Reasons {
		if !slices.ContainsFunc(loadReasons, func(l string) bool { return strings.Contains(r, l) }) {
			reasons = append(reasons, r)
		}
	}
	if len(reasons) != 2 || !strings.Contains(reasons[0], "reads missed") || reasons[1] != reason {
		t.Errorf("reasons %q\nwant [the misses, %q]", s.Verdict.Reasons, reason)
	}
	if len(s.Assertions) != 2 || s.Assertions[0].Holds || !s.Assertions[1].Holds {
		t.Errorf("assertions recorded %+v: want the hits one failed, errors == 0 held", s.Assertions)
	}
}

// TestSeedRefusedWithPosition: a statistics query that does not read, and
// assertions that do not parse or name what no sample records, are
// refused by plan with file:line:col; a statistics query the server
// refuses, or an assertion name the query does not return, is refused
// before any load with the same kind of position.
func TestSeedRefusedWithPosition(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	dir := t.TempDir()
	for _, c := range []struct{ extra, assert, want string }{
		{`      statistics: "DELETE FROM respcache_counters"`, `"errors == 0"`,
			`s.yaml:9:20: targets.pglc.postgres.statistics: a statistics query reads: it starts with SELECT, WITH, TABLE or VALUES, got "DELETE"`},
		{`      resp: {port: 6390}`, `"cache_hits = requests"`,
			`s.yaml:13:26: paths.mget.assert[0]: assertion "cache_hits = requests": unexpected "="`},
		{`      resp: {port: 6390}`, `"errors == 0 and cache_hit >= 1"`,
			`s.yaml:13:31: paths.mget.assert[0]: assertion "errors == 0 and cache_hit >= 1": unknown name "cache_hit" for resp samples of target "pglc"`},
	} {
		file := seedSuite(t, dir, c.extra, c.assert)
		_, stderr, code := invoke(t, "plan", file)
		if code != 2 || !strings.Contains(stderr, filepath.Join(dir, c.want)) {
			t.Errorf("plan: exit %d, stderr %q\nwant %q", code, stderr, c.want)
		}
	}

	respcache := respcacheBin(t)
	extra := fmt.Sprintf(`      statistics: "SELECT hits AS cache_hits FROM no_such_table"
      sidecar: {command: [%q, -listen, "127.0.0.1:{port}"]}
      resp: {port: 0}`, respcache)
	file := seedSuite(t, dir, extra, `"errors == 0"`)
	_, stderr, code := invoke(t, "run", file, "-o", filepath.Join(dir, "a.json"))
	if want := filepath.Join(dir, `s.yaml:9:20: targets.pglc.postgres.statistics: `) + `ERROR: relation "no_such_table" does not exist`; code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("run: exit %d, stderr %q\nwant %q", code, stderr, want)
	}
	extra = fmt.Sprintf(`      statistics: "SELECT coalesce(sum(hits), 0)::bigint AS cache_hits FROM respcache_counters"
      sidecar: {command: [%q, -listen, "127.0.0.1:{port}"]}
      resp: {port: 0}`, respcache)
	file = seedSuite(t, dir, extra, `"cache_misses == 0"`)
	_, stderr, code = invoke(t, "run", file, "-o", filepath.Join(dir, "b.json"))
	if want := filepath.Join(dir, `s.yaml:15:15: paths.mget.assert[0]: assertion "cache_misses == 0": unknown name "cache_misses": the statistics query returns cache_hits`); code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("run: exit %d, stderr %q\nwant %q", code, stderr, want)
	}
}

// TestRedisFillFalse: a redis target with fill: false is measured as it
// is: benchrig writes nothing (every GET of the empty server is a nil),
// and the run is verified.
func TestRedisFillFalse(t *testing.T) {
	port := startRedis(t)
	dir := t.TempDir()
	src := fmt.Sprintf(`name: fill-false
repeats: 1
phases: {load: 300ms}
targets:
  cache: {redis: {addr: "127.0.0.1:%d", fill: false}}
paths:
  get: {resp: {command: GET, key: "k:{id}"}}
matrix: {targets: [cache], paths: [get], connections: [2]}
`, port)
	file := filepath.Join(dir, "s.yaml")
	os.WriteFile(file, []byte(src), 0o644)
	res := filepath.Join(dir, "r.json")
	if out, stderr, code := invoke(t, "run", file, "-o", res); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	s := readResults(t, res).Sample
	// Every GET a nil: a miss, never a request (issue 26, item 6).
	if l := s.Load; l == nil || l.Requests != 0 || l.Misses == 0 || s.Stats["client_nils"] != float64(l.Misses+l.OutstandingAnswered) || s.Stats["client_hits"] != 0 {
		t.Fatalf("load %+v, stats %v: want every GET a nil, a miss (nothing filled)", s.Load, s.Stats)
	}
	if out, _, code := invoke(t, "verify", res); code != 0 {
		t.Errorf("verify: %s", out)
	}
}
