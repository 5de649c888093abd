package suite_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/benchrig/benchrig/internal/protocol/all"
	httpproto "github.com/benchrig/benchrig/internal/protocol/http"
	pgproto "github.com/benchrig/benchrig/internal/protocol/pg"
	respproto "github.com/benchrig/benchrig/internal/protocol/resp"
	. "github.com/benchrig/benchrig/internal/suite"
)

func mustParse(t *testing.T, name, src string) *Suite {
	t.Helper()
	s, err := Parse(name, []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

func mustLoad(t *testing.T, path string) *Suite {
	t.Helper()
	s, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s
}

func TestDefaults(t *testing.T) {
	s := mustParse(t, "min.yaml", okHead+okMatrix)
	if s.Repeats != DefaultRepeats || s.Sampler.Interval != DefaultSamplerInterval ||
		s.Phases != DefaultPhases() || s.Thresholds != DefaultThresholds() || s.Requests != 0 || s.Seed != 0 {
		t.Errorf("defaults not applied: %+v", s)
	}
	if !reflect.DeepEqual(s.Matrix.Batches, []int{1}) || !reflect.DeepEqual(s.Matrix.Pipeline, []int{1}) || s.Matrix.Rates != nil {
		t.Errorf("matrix defaults: %+v", s.Matrix)
	}
	h := s.Paths["hello"].Spec.(*httpproto.Path)
	if h.Method != "GET" || h.ExpectStatus != 200 {
		t.Errorf("http path defaults: %+v", h)
	}
	if k := s.Targets["web"].Kind(); k != KindCommand {
		t.Errorf("kind = %q", k)
	}
}

func TestSeedSuites(t *testing.T) {
	web := mustLoad(t, "testdata/http-frameworks.yaml")
	want := Phases{Baseline: Duration(1500 * time.Millisecond), Warmup: Duration(15 * time.Second),
		Settle: Duration(6 * time.Second), Load: Duration(60 * time.Second), Recovery: Duration(30 * time.Second)}
	if web.Phases != want || web.Seed != 42 || web.Repeats != 3 {
		t.Errorf("phases/seed/repeats: %+v %d %d", web.Phases, web.Seed, web.Repeats)
	}
	hello := web.Targets["go-hello"]
	if hello.CPUs != "0" || hello.Env["GOMAXPROCS"] != "1" || hello.Ready.Timeout != DefaultReadyTimeout {
		t.Errorf("go-hello: cpus %q env %v ready %+v", hello.CPUs, hello.Env, hello.Ready)
	}
	if c := web.Targets["node-http"].Checks[0]; c.Status != 200 || c.Method != "GET" {
		t.Errorf("check defaults: %+v", c)
	}
	if !reflect.DeepEqual(web.Matrix.Rates, []float64{100, 1000}) {
		t.Errorf("rates: %v", web.Matrix.Rates)
	}

	pg := mustLoad(t, "testdata/pg-local-cache.yaml")
	db := pg.Targets["pg"]
	if db.Kind() != KindPostgres || !db.Serve(pgproto.Key) || db.Serve(respproto.Key) || db.Serve(httpproto.Key) {
		t.Errorf("pg target: kind %q protocols %v", db.Kind(), db.Protocols())
	}
	if r := pg.Paths["resp-mget"].Spec.(*respproto.Path); r.Command != "MGET" || !r.MultiKey() {
		t.Errorf("resp command not normalised: %+v", r)
	}
	if w := pg.Workloads["mixed"]; w.Rows != DefaultRows || w.Hot != 128 || w.Writes != 5 {
		t.Errorf("workload defaults: %+v", w)
	}
	if pg.Placement.ClientGOMAXPROCS != 8 || pg.Placement.TargetCPUs != "0-1" {
		t.Errorf("placement: %+v", pg.Placement)
	}
}

func TestTargetKinds(t *testing.T) {
	src := `name: kinds
targets:
  redis: {redis: {ephemeral: true, token_env: REDIS_TOKEN}}
  remote: {redis: {addr: "127.0.0.1:6379"}}
  byenv: {postgres: {dsn_env: PGDSN}}
  nopass: {postgres: {dsn: "host=127.0.0.1 user=bench"}}
  running: {attach: {port: 8080}}
  pid: {attach: {pid: 1234}}
paths:
  get: {resp: {command: get, key: "k:{id}"}}
  one: {pg: {path: prepared-one}}
  hello: {http: {url: "http://127.0.0.1:8080/"}}
matrix:
  cases:
    - {target: redis, path: get}
    - {target: remote, path: get}
    - {target: byenv, path: one}
    - {target: nopass, path: one}
    - {target: running, path: hello}
    - {target: pid, path: hello}
  connections: [1]
`
	s := mustParse(t, "kinds.yaml", src)
	want := map[string]string{"redis": KindRedis, "remote": KindRedis, "byenv": KindPostgres, "nopass": KindPostgres, "running": KindAttach, "pid": KindAttach}
	for name, kind := range want {
		if got := s.Targets[name].Kind(); got != kind {
			t.Errorf("%s: kind %q, want %q", name, got, kind)
		}
	}
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Cells) != 6 || p.Cells[0].ID != "redis/get/c=1/b=1" || p.Cells[0].Protocol != respproto.Key {
		t.Errorf("cells: %+v", p.Cells)
	}
}

func TestAnchorsAndMergeKeys(t *testing.T) {
	src := `name: anchors
targets:
  a: &base {command: ["./srv", "{port}"], port: 9000, env: {MODE: fast}}
  b:
    <<: *base
    port: 9001
paths:
  hello: {http: {url: "http://127.0.0.1:{port}/"}}
conns: &conns [4, 64]
matrix: {targets: [a, b], paths: [hello], connections: *conns}
`
	_, err := Parse("anchors.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), `anchors.yaml:9:1: unknown key "conns"`) {
		t.Fatalf("an anchor holder must still be a known key, got %v", err)
	}
	src = strings.Replace(src, "conns: &conns [4, 64]\n", "", 1)
	src = strings.Replace(src, "connections: *conns", "connections: &c [4, 64]", 1)
	s := mustParse(t, "anchors.yaml", src)
	b := s.Targets["b"]
	if b.Port != 9001 || b.Env["MODE"] != "fast" || len(b.Command) != 2 {
		t.Errorf("merge key: %+v", b)
	}
}

func TestResolvedCanonical(t *testing.T) {
	data, err := os.ReadFile("testdata/pg-local-cache.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, b := mustParse(t, "x.yaml", string(data)), mustParse(t, "x.yaml", string(data))
	ra, err := a.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := b.Resolved()
	if !bytes.Equal(ra, rb) {
		t.Error("same suite, different Resolved bytes")
	}
	assertSortedKeys(t, ra)
	// Resolved is itself a suite: verify re-plans from it.
	again, err := Parse("resolved", ra)
	if err != nil {
		t.Fatalf("Resolved does not parse back as a suite: %v", err)
	}
	pa, _ := a.Plan()
	pb, err := again.Plan()
	if err != nil || len(pa.Samples) != len(pb.Samples) || pa.Samples[len(pa.Samples)-1] != pb.Samples[len(pb.Samples)-1] {
		t.Errorf("re-planned from Resolved: %v", err)
	}
	var back Suite
	if err := json.Unmarshal(ra, &back); err != nil {
		t.Fatalf("Resolved does not read back: %v", err)
	}
	if back.Phases != a.Phases || back.Name != a.Name {
		t.Errorf("read back: %+v", back)
	}
	sum := sha256.Sum256(data)
	if a.SHA256() != hex.EncodeToString(sum[:]) {
		t.Errorf("SHA256 %q not the file's, or not recorded", a.SHA256())
	}
}

// assertSortedKeys checks that every JSON object in data lists its keys in
// sorted order.
func assertSortedKeys(t *testing.T, data []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj  bool
		last string
		key  bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, frame{obj: true, key: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].obj {
					stack[len(stack)-1].key = true
				}
			}
			continue
		}
		if len(stack) == 0 || !stack[len(stack)-1].obj {
			continue
		}
		top := &stack[len(stack)-1]
		if top.key {
			k := tok.(string)
			if top.last != "" && k < top.last {
				t.Errorf("key %q after %q: not sorted", k, top.last)
			}
			top.last, top.key = k, false
		} else {
			top.key = true
		}
	}
}

func TestResolvedRedactsSecrets(t *testing.T) {
	src := strings.Replace(okHead, "port: 8080}", "port: 8080, env: {API_TOKEN: s3cr3t-value, MODE: fast}}", 1)
	src = strings.Replace(src, `"{port}"]`, `"{port}", "--auth-token=s3cr3t-value", "--mode=fast"]`, 1)
	src = strings.Replace(src, `{http: {url: "http://127.0.0.1:{port}/"}}`, `{http: {url: "http://127.0.0.1:{port}/", headers: {Authorization: "Bearer s3cr3t-value", Accept: text/plain}}}`, 1)
	s := mustParse(t, "secret.yaml", src+okMatrix)
	out, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "s3cr3t") {
		t.Errorf("secret in Resolved: %s", out)
	}
	if !strings.Contains(string(out), `"API_TOKEN":"[redacted]"`) || !strings.Contains(string(out), `"--auth-token=[redacted]","--mode=fast"`) || !strings.Contains(string(out), `"MODE":"fast"`) || !strings.Contains(string(out), `"Accept":"text/plain"`) {
		t.Errorf("redaction too wide or missing: %s", out)
	}
	if s.Targets["web"].Env["API_TOKEN"] != "s3cr3t-value" {
		t.Error("Resolved changed the suite it records")
	}
}

func TestPasswordNeverEchoed(t *testing.T) {
	for _, dsn := range []string{"postgres://u:hunter2@db/x", "host=db password=hunter2", "postgresql://db/x?password=hunter2"} {
		src := strings.Replace(pgHead, "ephemeral: true", "dsn: \""+dsn+"\"", 1) + "matrix: {targets: [db], paths: [one], connections: [4]}\n"
		_, err := Parse("p.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), "contains a password") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("dsn %q: %v", dsn, err)
		}
	}
}

func TestURLPasswordNeverEchoed(t *testing.T) {
	for _, u := range []string{"http://u:hunter2@127.0.0.1:{port}/", "ftp://u:hunter2@x/"} {
		src := strings.Replace(okHead, "http://127.0.0.1:{port}/", u, 1) + okMatrix
		_, err := Parse("u.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), "paths.hello.http.url") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("url %q: %v", u, err)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/no-such-suite.yaml")
	if err == nil || !strings.Contains(err.Error(), `read suite "testdata/no-such-suite.yaml"`) || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("Load missing file: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}

func TestParseCPUList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		ok   bool
	}{
		{"", nil, true}, {"0", []int{0}, true}, {"0-3", []int{0, 1, 2, 3}, true},
		{"3,0-1,1", []int{0, 1, 3}, true}, {" 2 , 4-5 ", []int{2, 4, 5}, true},
		{"3-1", nil, false}, {"a", nil, false}, {"1,", nil, false}, {"-1", nil, false},
		{"1-", nil, false}, {"99999", nil, false}, {"0x1", nil, false},
	} {
		got, err := ParseCPUList(c.in)
		if (err == nil) != c.ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v", c.in, got, err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Duration
		ok   bool
	}{
		{"0", 0, true}, {"1.5s", Duration(1500 * time.Millisecond), true}, {"250ms", Duration(250 * time.Millisecond), true},
		{"-1s", 0, false}, {"15", Duration(15 * time.Second), true}, {"1.5", Duration(1500 * time.Millisecond), true},
		{"-3", 0, false}, {"1e9", 0, false}, {"169h", 0, false}, {"soon", 0, false}, {"", 0, false},
	} {
		got, err := ParseDuration(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v", c.in, got, err)
		}
	}
	b, _ := json.Marshal(Duration(1500 * time.Millisecond))
	if string(b) != `"1.5s"` {
		t.Errorf("Duration JSON = %s", b)
	}
}

// TestMergeKeyPrecedence follows YAML 1.1: explicit keys win wherever they
// are written, and earlier merged mappings win over later ones.
func TestMergeKeyPrecedence(t *testing.T) {
	src := `name: merge
targets:
  a: &a {command: [a], port: 1, dir: from-a}
  b: &b {command: [b], port: 2, env: {X: from-b}}
  c:
    port: 3
    <<: [*a, *b]
paths:
  hello: {http: {url: "http://127.0.0.1:{port}/"}}
matrix: {targets: [c], paths: [hello], connections: [1]}
`
	c := mustParse(t, "merge.yaml", src).Targets["c"]
	if c.Port != 3 || c.Command[0] != "a" || c.Dir != "from-a" || c.Env["X"] != "from-b" {
		t.Errorf("merged target: %+v", c)
	}
}

// TestSamplerNoPSS: sampler.no_pss turns PSS off; suites without it
// resolve as before (the key is omitted), so recorded files still verify.
func TestSamplerNoPSS(t *testing.T) {
	s := mustParse(t, "nopss.yaml", okHead+okMatrix+"sampler: {interval: 500ms, no_pss: true}\n")
	if !s.Sampler.NoPSS || s.Sampler.Interval != Duration(500*time.Millisecond) {
		t.Errorf("sampler %+v", s.Sampler)
	}
	for _, src := range []string{okHead + okMatrix, okHead + okMatrix + "sampler: {no_pss: false}\n"} {
		b, err := json.Marshal(mustParse(t, "min.yaml", src).Sampler)
		if err != nil || strings.Contains(string(b), "no_pss") {
			t.Errorf("resolved sampler %s (%v): want no no_pss key", b, err)
		}
	}
	if _, err := Parse("bad.yaml", []byte(okHead+okMatrix+"sampler: {no_pss: sometimes}\n")); err == nil || !strings.Contains(err.Error(), "sampler.no_pss") {
		t.Errorf("no_pss: sometimes: %v", err)
	}
}

// TestBareSecondsInSuite: a bare number in a duration field is seconds, as
// wrk, autocannon and hey users write it.
func TestBareSecondsInSuite(t *testing.T) {
	s := mustParse(t, "s.yaml", okHead+okMatrix+"phases: {load: 60, warmup: 1.5, settle: 0}\n")
	if s.Phases.Load != Duration(time.Minute) || s.Phases.Warmup != Duration(1500*time.Millisecond) || s.Phases.Settle != 0 {
		t.Errorf("phases %+v", s.Phases)
	}
}

// TestHugeValueNotEchoed: a 1.5 MB key template and command (the suite bound is 4 MiB)
// is refused with its length and bound, and the message quotes its head
// only: a hostile or mistaken value never turns into megabytes of output.
func TestHugeValueNotEchoed(t *testing.T) {
	key := strings.Repeat("k", 1500<<10)
	src := "name: big\nphases: {load: 1s}\ntargets:\n  c: {redis: {ephemeral: true}}\npaths:\n  p: {resp: {command: \"" + key + "!\", key: \"" + key + "\"}}\n" +
		"workloads:\n  hot: {kind: hot, rows: 10, hot: 5}\nmatrix: {cases: [{target: c, path: p, workload: hot}], connections: [1]}\n"
	_, err := Parse("big.yaml", []byte(src))
	if err == nil {
		t.Fatal("a 1.5 MB key template was accepted")
	}
	msg := err.Error()
	if len(msg) > 4096 || !strings.Contains(msg, "paths.p.resp.key") || !strings.Contains(msg, "longer than the bound (4096 bytes") ||
		!strings.Contains(msg, "bytes in all") {
		t.Errorf("%d-byte message: %.600s", len(msg), msg)
	}
}
