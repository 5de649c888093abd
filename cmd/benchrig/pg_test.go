package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/testenv"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/pgephemeral"
	"github.com/benchrig/benchrig/internal/result"
)

// pgDocOut is the part of benchrig pg's results file the tests read.
type pgDocOut struct {
	Schema  string
	Args    []string
	Server  *result.TargetInfo // Name from the first sample, the rest from the provenance
	Plans   map[string]string
	Samples []result.Sample
}

// pgShortPhases keep every sample of a test around two seconds.
var pgShortPhases = []string{"-d", "1s", "--baseline", "200ms", "--settle", "100ms", "--recovery", "200ms", "--sample-interval", "100ms"}

// pgSkip skips (outside CI) when there are no PostgreSQL binaries.
func pgSkip(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, pgephemeral.ErrNoBinaries) {
		testenv.Missing(t, testenv.Postgres, err.Error())
	}
	t.Fatal(err)
}

func pgNeedBinaries(t *testing.T) {
	t.Helper()
	if _, err := pgephemeral.FindBinaries(context.Background(), ""); err != nil {
		pgSkip(t, err)
	}
}

// pgCLI runs benchrig with a bounded context and returns its outputs and
// the error run returned.
func pgCLI(t *testing.T, args ...string) (stdout, stderr string, code int, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	var o, e bytes.Buffer
	err = run(ctx, args, &o, &e)
	code = exitcode.Of(err, &e)
	return o.String(), e.String(), code, err
}

func pgReadDoc(t *testing.T, b []byte) pgDocOut {
	t.Helper()
	d := parseResults(t, string(b))
	doc := pgDocOut{Schema: d.Header.Schema, Args: d.Header.Args, Samples: d.Samples}
	pv, ok := d.Header.Targets["postgres"]
	if !ok {
		t.Fatalf("no postgres target in the header: %+v", d.Header.Targets)
	}
	doc.Server = &result.TargetInfo{Version: pv.Version, Settings: pv.Settings, SHA256: pv.SHA256, Binary: pv.Binary}
	if len(d.Samples) > 0 && d.Samples[0].Target != nil {
		doc.Server.Name = d.Samples[0].Target.Name
	}
	doc.Plans = pv.Plans
	return doc
}

// TestPGQuickMatrix runs 2 paths × 2 cases on an ephemeral server: the
// comparison table on stdout, and a JSON file with every sample, its
// server figures, statistics deltas and the plans.
func TestPGQuickMatrix(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	pgNeedBinaries(t)
	out := filepath.Join(t.TempDir(), "pg.json")
	args := append([]string{"pg", "--ephemeral", "--path", "prepared-one,any", "--batch", "1,4", "-c", "2",
		"--rows", "512", "--warmup", "0", "-o", out}, pgShortPhases...)
	stdout, stderr, code, _ := pgCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"Requests/s, median", "prepared-one", "any-param", "1 key · 2 conns", "4 keys · 2 conns", "Server µs/request"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	// The verdict is the machine's: on a busy one a 2-connection loop may
	// saturate its core, so either verdict is a progress line.
	if !regexp.MustCompile(`\[4/4\] 4 keys · 2 conns · .+ · repeat 1 · \d+ req/s · p99 .+ · (HEALTHY|UNHEALTHY: [^\n]+) · done`).MatchString(stderr) {
		t.Errorf("no progress line for the 4th sample:\n%s", stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	doc := pgReadDoc(t, b)
	if doc.Schema != result.ResultsSchema || len(doc.Samples) != 4 {
		t.Fatalf("schema %q, %d samples", doc.Schema, len(doc.Samples))
	}
	if doc.Server == nil || doc.Server.Version == "" || doc.Server.Settings["fsync"] != "off" || doc.Server.SHA256 == "" {
		t.Errorf("server provenance %+v", doc.Server)
	}
	for _, label := range []string{"prepared-one", "any[param]"} {
		if !json.Valid([]byte(doc.Plans[label])) || !strings.Contains(doc.Plans[label], "Index") {
			t.Errorf("plan of %s: %q", label, doc.Plans[label])
		}
	}
	seen := map[string]bool{}
	for _, s := range doc.Samples {
		seen[s.Cell] = true
		if s.Error != "" || s.Load == nil || s.Load.Requests == 0 {
			t.Errorf("sample %s: error %q", s.Key, s.Error)
			continue
		}
		if s.Server == nil || s.Server.Figures.Cores <= 0 || s.Server.Figures.PSSPeak == 0 {
			t.Errorf("sample %s: server figures %+v", s.Key, s.Server)
		}
		if s.Stats["xact_commit"] < float64(s.Load.Requests) {
			t.Errorf("sample %s: xact_commit delta %v < %d requests", s.Key, s.Stats["xact_commit"], s.Load.Requests)
		}
		if s.Target == nil || s.Target.Kind != "postgres" || s.Target.PID == 0 {
			t.Errorf("sample %s: target %+v", s.Key, s.Target)
		}
	}
	if len(seen) != 4 {
		t.Errorf("cells %v, want 4 distinct", seen)
	}
}

// pgTestServer is a server started by the test, reached by DSN: database
// bench holds the dataset, owned by role bench (password pgTestPassword);
// database nopk holds items without a primary key; database empty has no
// items; max_connections is 20.
type pgTestServer struct {
	srv  *pgephemeral.Server
	port int
}

const pgTestPassword = "Right-Secret-4711"

func (s *pgTestServer) dsn(user, password, db string) string {
	if password != "" {
		user += ":" + password
	}
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", user, s.port, db)
}

func startPGTestServer(t *testing.T) *pgTestServer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv, err := pgephemeral.StartEphemeral(ctx, pgephemeral.Options{MaxConnections: 20})
	if err != nil {
		pgSkip(t, err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	s := &pgTestServer{srv: srv, port: srv.Port()}
	exec := func(db string, stmts ...string) {
		conn, err := pgclient.Connect(ctx, s.dsn("postgres", "", db))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		for _, q := range stmts {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if db == "bench" {
			if err := pgclient.CreateDataset(ctx, conn, pgclient.Dataset{Rows: 512, PayloadBytes: 64}); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(ctx, "ALTER TABLE items OWNER TO bench"); err != nil {
				t.Fatal(err)
			}
		}
	}
	exec("postgres", "CREATE ROLE bench LOGIN PASSWORD '"+pgTestPassword+"'",
		"CREATE DATABASE bench OWNER bench", "CREATE DATABASE nopk OWNER bench", "CREATE DATABASE empty OWNER bench")
	exec("bench")
	exec("nopk", "CREATE TABLE items (id bigint NOT NULL, revision bigint NOT NULL DEFAULT 0, payload text NOT NULL)",
		"INSERT INTO items SELECT i, 0, 'x' FROM generate_series(1, 512) i", "ALTER TABLE items OWNER TO bench")
	return s
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestPGQuickDSN runs against a server reached by DSN with a password: a
// mixed workload whose reads and writes are counted apart and whose
// tup_updated delta equals the writes, then every refusal, with exit codes,
// one-line messages and the password never shown.
func TestPGQuickDSN(t *testing.T) {
	pgNeedBinaries(t)
	t.Setenv("PGDSN", "")
	t.Setenv("DATABASE_URL", "")
	s := startPGTestServer(t)
	good := s.dsn("bench", pgTestPassword, "bench")

	t.Run("mixed", func(t *testing.T) {
		t.Setenv("BENCH_DSN", good)
		args := append([]string{"pg", "--dsn-env", "BENCH_DSN", "--path", "any", "--batch", "4", "-c", "2", "--rows", "512",
			"--workload", "mixed", "--write-every", "4", "--warmup", "300ms", "--json"}, pgShortPhases...)
		stdout, stderr, code, _ := pgCLI(t, args...)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		if strings.Contains(stdout+stderr, pgTestPassword) {
			t.Fatal("the password appears in the output")
		}
		doc := pgReadDoc(t, []byte(stdout))
		if len(doc.Samples) != 1 {
			t.Fatalf("%d samples", len(doc.Samples))
		}
		smp := doc.Samples[0]
		if smp.Error != "" || smp.Load == nil {
			t.Fatalf("sample error %q", smp.Error)
		}
		ops, late := map[string]int64{}, map[string]int64{}
		for _, o := range smp.Load.Ops {
			ops[o.Name], late[o.Name] = o.Requests, o.OutstandingAnswered
		}
		if ops["read"] == 0 || ops["write"] == 0 || ops["read"]+ops["write"] != smp.Load.Requests {
			t.Fatalf("ops %v, requests %d", ops, smp.Load.Requests)
		}
		// the server counts the writes of the window and those still
		// outstanding at its end that it answered during the drain; one
		// outstanding and unanswered may or may not have reached it
		lo, hi := ops["write"]+late["write"], ops["write"]+late["write"]+smp.Load.OutstandingAtEnd-smp.Load.OutstandingAnswered
		if got := int64(smp.Stats["tup_updated"]); got < lo || got > hi {
			t.Errorf("tup_updated delta %d, want the %d writes + %d answered after the window's end (at most %d) (stats %v)", got, ops["write"], late["write"], hi, smp.Stats)
		}
		if smp.Server == nil || smp.Server.Figures.Cores <= 0 {
			t.Errorf("the local DSN server was not sampled: %+v", smp.Server)
		}
		if doc.Server == nil || !strings.Contains(doc.Server.Name, pgclient.Redacted) {
			t.Errorf("server name %+v, want the redacted DSN", doc.Server)
		}
	})

	fails := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unreachable", []string{"--dsn", fmt.Sprintf("postgres://bench:%s@127.0.0.1:%d/bench", pgTestPassword, closedPort(t))}, 1, "connect to"},
		{"wrong password", []string{"--dsn", s.dsn("bench", "Wrong-Secret-0815", "bench")}, 1, "password authentication failed"},
		{"missing table", []string{"--dsn", s.dsn("bench", pgTestPassword, "empty")}, 1, `table "items" does not exist`},
		{"no primary key", []string{"--dsn", s.dsn("bench", pgTestPassword, "nopk")}, 1, "has no primary key"},
		{"sql wrong rows", []string{"--dsn", good, "--path", "any,sql", "--batch", "4",
			"--sql", "SELECT row_to_json(t) FROM items t WHERE id = ANY($1) ORDER BY id LIMIT 1"}, 1, "preflight"},
		{"too many connections", []string{"--dsn", good, "-c", "64"}, 1, "max_connections 20"},
		{"bad path", []string{"--dsn", good, "--path", "any,fastest"}, 2, `--path "fastest"`},
		{"sql without statement", []string{"--dsn", good, "--path", "sql"}, 2, "--path sql needs --sql"},
		{"batch 0", []string{"--dsn", good, "--batch", "0"}, 2, "--batch 0"},
		{"connections 0", []string{"--dsn", good, "-c", "4,0"}, 2, "--connections: must be ≥ 1"},
		{"both", []string{"--dsn", good, "--ephemeral"}, 2, "not both"},
		{"neither", nil, 2, "give --ephemeral or --dsn"},
	}
	for _, tc := range fails {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.json")
			args := append(append([]string{"pg", "--rows", "512", "-o", out}, tc.args...), pgShortPhases...)
			stdout, stderr, code, err := pgCLI(t, args...)
			if code != tc.code || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("exit %d, error %v; want exit %d with %q\nstderr:\n%s", code, err, tc.code, tc.want, stderr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("message is not one line: %q", err)
			}
			b, _ := os.ReadFile(out)
			for _, secret := range []string{pgTestPassword, "Wrong-Secret-0815"} {
				if strings.Contains(stdout+stderr+string(b), secret) {
					t.Errorf("the password %q appears in the output:\n%s\n%s", secret, stdout, stderr)
				}
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPGQuickInterrupt cancels a run mid-sample, as Ctrl-C does: the
// ephemeral server's postmaster and its directory must be gone when run
// returns.
func TestPGQuickInterrupt(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	pgNeedBinaries(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"pg", "--ephemeral", "-c", "2", "-d", "20s", "--rows", "256", "--sample-interval", "100ms"}, &stdout, &stderr)
	}()
	started := regexp.MustCompile(`ephemeral, data (\S+) · postmaster pid (\d+)`)
	var m []string
	deadline := time.Now().Add(40 * time.Second)
	for m == nil && time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("run ended before the interrupt: %v\n%s", err, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		m = started.FindStringSubmatch(stderr.String())
	}
	if m == nil {
		cancel()
		<-done
		t.Fatalf("the server did not start:\n%s", stderr.String())
	}
	time.Sleep(1500 * time.Millisecond) // into the sample's phases
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return 30 s after the interrupt")
	}
	if err == nil {
		t.Error("an interrupted run returned no error")
	}
	dir := filepath.Dir(m[1])
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the server directory %s is still there (%v)", dir, err)
	}
	pid, _ := strconv.Atoi(m[2])
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if i := bytes.LastIndexByte(b, ')'); i < 0 || i+2 >= len(b) || b[i+2] != 'Z' {
			t.Errorf("postmaster %d still runs: %s", pid, b)
		}
	}
}
