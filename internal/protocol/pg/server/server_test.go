package postgres

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/pgephemeral"
	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/protocol/pg/driver"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/secret/secrettest"
	"github.com/benchrig/benchrig/internal/testenv"
	"github.com/benchrig/benchrig/internal/workload"
)

// startTestPG starts an ephemeral server with a small dataset, stopped at
// the end of the test; it skips (outside CI) without PostgreSQL binaries.
func startTestPG(t *testing.T, ctx context.Context) *PGServer {
	t.Helper()
	s, err := StartPG(ctx, PGOptions{Ephemeral: true, MaxConnections: 16,
		Dataset: pgclient.Dataset{Rows: 512, PayloadBytes: 64}})
	if err != nil {
		if errors.Is(err, pgephemeral.ErrNoBinaries) {
			testenv.Missing(t, testenv.Postgres, err.Error())
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s
}

// pgPath is a path config over the test dataset.
func pgPath(path pg.Path, kind workload.Kind, batch int) pg.Config {
	return pg.Config{Path: path, Workload: workload.Config{Kind: kind, Batch: batch}}
}

// TestPGServer runs one ephemeral server through its life: provenance,
// preparation, refusals, a mixed sample whose statistics must match the
// client's counts exactly, and a stop that leaves nothing behind.
func TestPGServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	s := startTestPG(t, ctx)

	info := s.Info()
	if info.Kind != "postgres" || info.Version == "" || info.PID <= 0 || info.PID != s.PID() || !s.Alive() {
		t.Fatalf("info %+v, PID %d, alive %v", info, s.PID(), s.Alive())
	}
	if info.Settings["fsync"] != "off" || info.Settings["max_connections"] != "16" {
		t.Errorf("settings %v: want fsync off, max_connections 16", info.Settings)
	}
	if sum, err := hex.DecodeString(info.SHA256); err != nil || len(sum) != 32 || filepath.Base(info.Binary) != "postgres" {
		t.Errorf("binary %q sha256 %q", info.Binary, info.SHA256)
	}
	if info.Name != s.DSN().String() || strings.Contains(info.Name, "[redacted]") != strings.Contains(s.DSN().Reveal(), "password") {
		t.Errorf("name %q, want the redacted DSN", info.Name)
	}

	t.Run("prepare", func(t *testing.T) {
		paths := []pg.Config{pgPath(pg.PreparedOne, workload.Hot, 8), pgPath(pg.Any, workload.Mixed, 8)}
		if err := s.Prepare(ctx, paths, 4); err != nil {
			t.Fatal(err)
		}
		plans := s.Plans()
		for _, label := range []string{"prepared-one", "any[param]", "any[param] update"} {
			var doc []map[string]any
			if err := json.Unmarshal([]byte(plans[label]), &doc); err != nil || len(doc) != 1 || doc[0]["Plan"] == nil {
				t.Errorf("plan %q = %q: %v", label, plans[label], err)
			}
		}
		if len(plans) != 3 {
			t.Errorf("plans for %d statements, want 3: %v", len(plans), plans)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		err := s.Prepare(ctx, []pg.Config{pgPath(pg.Any, workload.Hot, 1)}, 40)
		if err == nil || !strings.Contains(err.Error(), "max_connections 16") {
			t.Errorf("40 connections on max_connections 16: %v", err)
		}
		bad := pgPath(pg.SQL, workload.Hot, 4)
		bad.SQL = "SELECT row_to_json(t) FROM items t WHERE id = ANY($1) LIMIT 1"
		err = s.Prepare(ctx, []pg.Config{pgPath(pg.Any, workload.Hot, 4), bad}, 2)
		if err == nil || !strings.Contains(err.Error(), "preflight") {
			t.Errorf("sql path returning one row for several keys: %v", err)
		}
		if _, err := StartPG(ctx, PGOptions{Ephemeral: true, DSN: s.DSN()}); err == nil {
			t.Error("both ephemeral and DSN accepted")
		}
	})

	// The statistics are exact whether the engine drives the connections
	// from event loops (path any) or a goroutine each (prepared-one in
	// pipeline mode, which the loops do not drive).
	pipelined := pgPath(pg.PreparedOne, workload.Mixed, 8)
	pipelined.BatchMode = pg.Pipeline
	for _, path := range []pg.Config{pgPath(pg.Any, workload.Mixed, 8), pipelined} {
		t.Run("mixed sample "+path.Label(), func(t *testing.T) { mixedSample(t, ctx, s, path) })
	}

	t.Run("stop", func(t *testing.T) {
		pid, dir := s.PID(), filepath.Dir(s.Info().Dir)
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("server directory %s left behind: %v", dir, err)
		}
		if proc.Default().Alive(pid) {
			t.Errorf("postmaster %d still runs", pid)
		}
		if err := s.Stop(ctx); err != nil {
			t.Errorf("second Stop: %v", err)
		}
		if err := s.Reset(ctx); err == nil {
			t.Error("Reset after Stop succeeded")
		}
	})
}

func TestPGOptionsRedacted(t *testing.T) {
	o := PGOptions{DSN: secret.NewDSN("postgres://bench:s3cr3t-pw@db.example:5432/bench")}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{string(b), o.String(), fmt.Sprintf("%#v", o)} {
		if strings.Contains(text, "s3cr3t-pw") || !strings.Contains(text, "db.example") {
			t.Errorf("%q: password shown or server hidden", text)
		}
	}
	if o.DSN.Reveal() != "postgres://bench:s3cr3t-pw@db.example:5432/bench" {
		t.Error("printing changed the DSN")
	}
	if want := `{"ephemeral":false,"dsn":"postgres://bench:[redacted]@db.example:5432/bench","dataset":{"table":"","rows":0,"payload_bytes":0}}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	if b, _ := json.Marshal(PGOptions{Ephemeral: true}); string(b) != `{"ephemeral":true,"dataset":{"table":"","rows":0,"payload_bytes":0}}` {
		t.Errorf("JSON of an ephemeral server %s: the empty DSN is left out", b)
	}
	for _, v := range []any{o, &o, struct{ Server PGOptions }{o}} {
		secrettest.NoLeak(t, v, "s3cr3t-pw")
	}
	if _, err := StartPG(context.Background(), PGOptions{}); err == nil {
		t.Error("neither ephemeral nor DSN accepted")
	}
}

// mixedSample measures one mixed sample of path on s and checks that the
// server's statistics match the client's counts exactly.
func mixedSample(t *testing.T, ctx context.Context, s *PGServer, path pg.Config) {
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	path.Workload.WriteEvery = 4 // many writes in a short window
	spec, err := s.Spec(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(spec.DriverConfig)+string(spec.SystemConfig), "password") {
		t.Errorf("config %s %s", spec.DriverConfig, spec.SystemConfig)
	}
	spec.Engine = load.Config{EngineConfig: result.EngineConfig{Connections: 3, Pipeline: 1}}
	spec.Phases = result.Phases{Baseline: 200 * time.Millisecond, Warmup: 500 * time.Millisecond,
		Settle: 100 * time.Millisecond, Load: time.Second, Recovery: 200 * time.Millisecond}
	spec.Thresholds = result.DefaultThresholds()
	spec.SamplerInterval = 100 * time.Millisecond
	smp := run.Measure(ctx, spec)
	if smp.Error != "" || smp.Load == nil {
		t.Fatalf("sample failed: %s", smp.Error)
	}
	ops, answered := map[string]int64{}, map[string]int64{}
	for _, o := range smp.Load.Ops {
		ops[o.Name], answered[o.Name] = o.Requests, o.OutstandingAnswered
	}
	if ops["read"] == 0 || ops["write"] == 0 || ops["read"]+ops["write"] != smp.Load.Requests {
		t.Fatalf("ops %v, requests %d", ops, smp.Load.Requests)
	}
	// The server also ran the writes outstanding at the window's end
	// that it answered in the drain.
	ops["write"] += answered["write"]
	if smp.Load.Errors+smp.Load.Unexpected+smp.Load.Timeouts != 0 {
		t.Errorf("failures: %v", smp.Load.Messages)
	}
	st := smp.Stats
	t.Logf("ops %v stats %v", ops, st)
	if st["tup_updated"] != float64(ops["write"]) || st["revisions"] != float64(ops["write"]) {
		t.Errorf("tup_updated %v, revisions %v, want the %d writes", st["tup_updated"], st["revisions"], ops["write"])
	}
	if st["xact_commit"] < float64(smp.Load.Requests) {
		t.Errorf("xact_commit %v < %d requests", st["xact_commit"], smp.Load.Requests)
	}
	if st["rows"] != 0 {
		t.Errorf("rows delta %v, want 0", st["rows"])
	}
	if smp.Server == nil || smp.Server.Figures.Cores <= 0 || smp.Server.Figures.PSSPeak == 0 {
		t.Errorf("server figures %+v", smp.Server)
	}
	if smp.Target == nil || smp.Target.Kind != "postgres" {
		t.Errorf("target %+v", smp.Target)
	}
	if !s.Alive() {
		t.Error("the server must outlive the sample")
	}
	conns, loops := spec.Driver.(*pgSampleDriver).open()
	if wantLoops := path.Path == pg.Any; (len(loops) > 0) != wantLoops || (len(conns) > 0) == wantLoops {
		t.Errorf("%d event loops and %d connections: want loops %v", len(loops), len(conns), wantLoops)
	}
}
