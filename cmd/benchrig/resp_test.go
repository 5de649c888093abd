package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/pgephemeral"
	"github.com/benchrig/benchrig/internal/redisephemeral"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/testenv"
)

// respNeedRedis skips without redis-server, or fails under CI.
func respNeedRedis(t *testing.T) {
	t.Helper()
	testenv.LookPath(t, testenv.Redis, "redis-server")
}

// readMultiDoc reads a benchrig resp results file.
func readMultiDoc(t *testing.T, b []byte) *resultsDoc {
	t.Helper()
	doc := parseResults(t, string(b))
	if doc.Header.Schema != result.ResultsSchema || doc.Header.Tool.Go == "" {
		t.Fatalf("schema %q, tool %+v", doc.Header.Schema, doc.Header.Tool)
	}
	return doc
}

// respBatch is the MGET batch recorded in a sample's configuration.
func respBatch(t *testing.T, s *result.Sample) float64 {
	t.Helper()
	var conf struct {
		Batch float64 `json:"batch"`
	}
	if s.Config == nil || s.Config.Protocol != "resp" {
		t.Fatalf("config %+v", s.Config)
	}
	if err := json.Unmarshal(s.Config.Driver, &conf); err != nil || conf.Batch < 1 {
		t.Fatalf("driver config %s: %v", s.Config.Driver, err)
	}
	return conf.Batch
}

// TestRESPQuickMatrix runs two cases against an ephemeral server and checks
// the matrix, the progress lines, and that each sample's server statistics
// count exactly requests × batch hits.
func TestRESPQuickMatrix(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	respNeedRedis(t)
	out := filepath.Join(t.TempDir(), "resp.json")
	stdout, stderr, code := invoke(t, "resp", "--ephemeral", "--batch", "1,8", "-c", "3", "-d", "600ms",
		"--sample-interval", "100ms", "--recovery", "100ms", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"Requests/s, median", "1 key · 3 conns", "8 keys · 3 conns", "MGET", "Server µs/request", "Result written to"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	for _, want := range []string{"Filled 128 keys", "[1/2] 1 key · 3 conns · redis mget keys · repeat 1 · ", "[2/2] 8 keys · 3 conns · redis mget keys · repeat 1 · "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	doc := readMultiDoc(t, b)
	if len(doc.Samples) != 2 {
		t.Fatalf("%d samples, want 2", len(doc.Samples))
	}
	for i := range doc.Samples {
		s := &doc.Samples[i]
		l := s.Load
		if s.Error != "" || l == nil || l.Requests == 0 || l.Errors+l.Timeouts+l.Unexpected != 0 {
			t.Fatalf("sample %d: error %q, load %+v", i, s.Error, l)
		}
		if s.Server == nil || s.Server.Figures.WindowSeconds <= 0 || s.Server.Figures.MicrosPerRequest <= 0 {
			t.Errorf("sample %d: no server figures: %+v", i, s.Server)
		}
		if s.Target == nil || s.Target.Kind != "redis" || s.Target.Version == "" {
			t.Errorf("sample %d: target %+v", i, s.Target)
		}
		batch := respBatch(t, s)
		// The server also served the requests outstanding at the window's
		// end that it answered in the drain.
		if hits := s.Stats["keyspace_hits"]; hits != float64(l.Requests+l.OutstandingAnswered)*batch || s.Stats["keyspace_misses"] != 0 {
			t.Errorf("sample %d: %v hits, %v misses; want %d requests (+ %d answered after the window) × %v keys, no misses", i, hits, s.Stats["keyspace_misses"], l.Requests, l.OutstandingAnswered, batch)
		}
		if s.Stats["client_hits"] != s.Stats["keyspace_hits"] {
			t.Errorf("sample %d: the client saw %v hits, the server %v", i, s.Stats["client_hits"], s.Stats["keyspace_hits"])
		}
	}
}

// TestRESPSingleSampleReport runs one GET sample: the full terminal report
// with the target statistics.
func TestRESPSingleSampleReport(t *testing.T) {
	respNeedRedis(t)
	stdout, stderr, code := invoke(t, "resp", "--ephemeral", "--command", "get", "-c", "2", "-p", "4", "-n", "400")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"benchrig resp 127.0.0.1:", "GET 1 key · 2 conns · p=4", "400 requests", "│ Latency ", "Server (whole process tree",
		"Target statistics over the load window", "keyspace_hits                400", "HEALTHY"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
}

// TestRESPAuth checks that a refused AUTH fails the run (exit 1) with a clear
// message before any load, and that no token is ever printed or written.
func TestRESPAuth(t *testing.T) {
	respNeedRedis(t)
	const right, wrong = "s3cret-right-7a41c", "s3cret-wrong-93e0b"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, err := redisephemeral.Start(ctx, redisephemeral.Options{Password: secret.New(right)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop(context.Background()) })
	t.Setenv("BENCHRIG_RESP_TOKEN", wrong)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(right+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secretFree := func(what string, texts ...string) {
		t.Helper()
		for _, s := range texts {
			if strings.Contains(s, right) || strings.Contains(s, wrong) {
				t.Errorf("%s: a token appears in the output:\n%s", what, s)
			}
		}
	}

	stdout, stderr, code := invoke(t, "resp", "--addr", srv.Addr(), "--token-env", "BENCHRIG_RESP_TOKEN", "-d", "300ms")
	if code != 1 || !strings.Contains(stderr, "AUTH failed") || !strings.Contains(stderr, "WRONGPASS") || strings.Contains(stdout, "req/s") {
		t.Errorf("wrong token: exit %d\n%s\n%s", code, stdout, stderr)
	}
	secretFree("wrong token", stdout, stderr)

	stdout, stderr, code = invoke(t, "resp", "--addr", srv.Addr(), "-d", "300ms")
	if code != 1 || !strings.Contains(stderr, "NOAUTH") || !strings.Contains(stderr, "requires AUTH") {
		t.Errorf("no token: exit %d\n%s\n%s", code, stdout, stderr)
	}

	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code = invoke(t, "resp", "--addr", srv.Addr(), "--token-file", tokenFile, "--fill", "-c", "2", "-n", "300", "-o", out)
	if code != 0 {
		t.Fatalf("right token: exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	secretFree("right token", stdout, stderr, string(b))
	doc := readMultiDoc(t, b)
	if s := doc.Samples[0]; s.Load == nil || s.Load.Requests != 300 || s.Stats["keyspace_hits"] != 300 || !strings.Contains(string(s.Config.Driver), tokenFile) {
		t.Errorf("sample with AUTH: %+v, stats %v, config %s", s.Load, s.Stats, s.Config.Driver)
	}
}

// TestRESPFillFromEphemeralPG runs the PostgreSQL fill end to end: the
// pre-flight verification and the sampled validation during the load.
func TestRESPFillFromEphemeralPG(t *testing.T) {
	respNeedRedis(t)
	if _, err := pgephemeral.FindBinaries(context.Background(), ""); errors.Is(err, pgephemeral.ErrNoBinaries) {
		testenv.Missing(t, testenv.Postgres, err.Error())
	}
	stdout, stderr, code := invoke(t, "resp", "--ephemeral", "--fill-from-pg", "--ephemeral-pg", "--rows", "256", "--keyspace", "200",
		"--verify-against-pg", "--validate-sampled", "0.5", "--batch", "16", "-c", "2", "-n", "300", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	doc := readMultiDoc(t, []byte(stdout))
	s := doc.Samples[0]
	if s.Stats["client_validated"] < 300*16/4 || s.Stats["client_mismatches"] != 0 || s.Stats["keyspace_hits"] != 300*16 {
		t.Errorf("stats %v, verdict %+v", s.Stats, s.Verdict)
	}
	healthyButForLoad(t, "fill from PostgreSQL", s.Verdict)
	var suite struct {
		Targets map[string]struct {
			Redis struct {
				FillFromPG      map[string]any `json:"fill_from_pg"`
				VerifyAgainstPG bool           `json:"verify_against_pg"`
			} `json:"redis"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(doc.Header.Suite.Resolved, &suite); err != nil || suite.Targets["redis"].Redis.FillFromPG["ephemeral"] != true || !suite.Targets["redis"].Redis.VerifyAgainstPG {
		t.Errorf("fill in the recorded suite: %s (%v)", doc.Header.Suite.Resolved, err)
	}
}

func TestRESPRefusesBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"resp"},
		{"resp", "--ephemeral", "--addr", "127.0.0.1:6379"},
		{"resp", "--ephemeral", "--batch", "0"},
		{"resp", "--ephemeral", "--batch", "1,1025"},
		{"resp", "--ephemeral", "--batch", "x"},
		{"resp", "--ephemeral", "-p", "0"},
		{"resp", "--ephemeral", "-c", "4,0"},
		{"resp", "--ephemeral", "--command", "FLUSHALL"},
		{"resp", "--ephemeral", "--command", "custom"},
		{"resp", "--ephemeral", "--command", "GET", "--batch", "4"},
		{"resp", "--ephemeral", "--key", "item"},
		{"resp", "--ephemeral", "--tls"},
		{"resp", "--ephemeral", "--verify-against-pg"},
		{"resp", "--ephemeral", "--fill-from-pg"},
		{"resp", "--ephemeral", "--validate-sampled", "2"},
		{"resp", "--ephemeral", "-R", "100", "-p", "1,4"},
	} {
		if _, stderr, code := invoke(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)\n%s", args, code, stderr)
		}
	}
}

// TestRESPFailsOnBadPeer checks exit 1 for an unreachable address and for a
// peer that does not speak RESP.
func TestRESPFailsOnBadPeer(t *testing.T) {
	addr := strings.TrimSuffix(strings.TrimPrefix(helloServer(t), "http://"), "/")
	_, stderr, code := invoke(t, "resp", "--addr", addr, "-d", "300ms")
	if code != 1 || !strings.Contains(stderr, "does not speak RESP") {
		t.Errorf("HTTP peer: exit %d\n%s", code, stderr)
	}
	_, stderr, code = invoke(t, "resp", "--addr", "127.0.0.1:1", "-d", "300ms")
	if code != 1 || !strings.Contains(stderr, "connection refused") {
		t.Errorf("closed port: exit %d\n%s", code, stderr)
	}
}

// TestRESPVerifyWithoutFill: a RESP server that fills itself (here: filled
// by an earlier run, as a cache-aside application would) is checked against
// PostgreSQL without benchrig writing a key (--fill=false
// --verify-against-pg); a changed row refuses the run and names its key.
func TestRESPVerifyWithoutFill(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	pgNeedBinaries(t)
	respNeedRedis(t)
	pg := startPGTestServer(t)
	dsn := pg.dsn("bench", pgTestPassword, "bench")
	port := startRedis(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	base := []string{"resp", "--addr", addr, "--keyspace", "64", "--batch", "16", "-c", "2", "-n", "50", "--fill-from-pg-dsn", dsn, "--verify-against-pg"}
	if _, stderr, code := invoke(t, append(base, "--fill-from-pg")...); code != 0 {
		t.Fatalf("filling run: exit %d: %s", code, stderr)
	}
	_, stderr, code := invoke(t, append(base, "--fill=false")...)
	if code != 0 || !strings.Contains(stderr, "Pre-flight") || strings.Contains(stderr, "Filled") {
		t.Fatalf("--fill=false --verify-against-pg: exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, pgTestPassword) {
		t.Fatal("the DSN's password was printed")
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "SET item:7 wrong\r\n")
	buf := make([]byte, 16)
	c.Read(buf)
	c.Close()
	_, stderr, code = invoke(t, append(base, "--fill=false")...)
	if code != 1 || !strings.Contains(stderr, "item:7") {
		t.Errorf("a changed row: exit %d, stderr %q; want exit 1 naming item:7", code, stderr)
	}
}
