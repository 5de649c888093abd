package respserver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/pgephemeral"
	"github.com/benchrig/benchrig/internal/protocol/resp/driver"
	"github.com/benchrig/benchrig/internal/resp/resptest"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/secret/secrettest"
	"github.com/benchrig/benchrig/internal/testenv"
)

// needRedisServer skips without redis-server, or fails under CI.
func needRedisServer(t *testing.T) {
	t.Helper()
	testenv.LookPath(t, testenv.Redis, "redis-server")
}

// startTestRedis starts an ephemeral server stopped at the end of the test.
func startTestRedis(t *testing.T, ctx context.Context, o RedisOptions) *RedisServer {
	t.Helper()
	needRedisServer(t)
	o.Ephemeral = true
	s, err := StartRedis(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s
}

func TestRedisOptionsRefused(t *testing.T) {
	for _, tc := range []struct {
		o    RedisOptions
		want string
	}{
		{RedisOptions{}, "give ephemeral or addr"},
		{RedisOptions{Ephemeral: true, Addr: "127.0.0.1:6379"}, "not both"},
		{RedisOptions{Addr: "localhost"}, "want host:port"},
		{RedisOptions{Ephemeral: true, TLS: resp.TLSConfig{Enabled: true}}, "tls applies to an existing server"},
		{RedisOptions{Addr: "127.0.0.1:1", TokenEnv: "A", TokenFile: "b"}, "not both"},
		{RedisOptions{Addr: "127.0.0.1:1", User: "u"}, "user needs a token"},
		{RedisOptions{Addr: "127.0.0.1:1", TokenEnv: "BENCHRIG_SURELY_UNSET_VAR"}, "BENCHRIG_SURELY_UNSET_VAR is not set"},
		{RedisOptions{Ephemeral: true, CPUs: "x"}, "cpus"},
	} {
		_, err := StartRedis(context.Background(), tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want an error containing %q", tc.o, err, tc.want)
		}
	}
}

func TestDemoRowShape(t *testing.T) {
	var v map[string]any
	b := DemoRow(nil, 42, 128)
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	p, _ := v["payload"].(string)
	if v["id"] != float64(42) || v["revision"] != float64(0) || p != pgclient.Payload(42, 128) || len(p) != 128 {
		t.Fatalf("demo row %s", b)
	}
	ids := ProbeIDs(3)
	if !reflect.DeepEqual(ids, []int64{1, 2, 3, 0, 1_000_003}) {
		t.Fatalf("ProbeIDs(3) = %v", ids)
	}
	if k := RedisKey(`CRUD:{db}.public.items:{"id":{id}}`, "bench", 7); k != `CRUD:bench.public.items:{"id":7}` {
		t.Fatalf("RedisKey = %q", k)
	}
}

// TestRedisSampleHitsMatchRequests fills an ephemeral server, measures one
// sample through Spec, and checks that the server's statistics delta is
// exactly requests × batch hits and no misses, with server figures.
func TestRedisSampleHitsMatchRequests(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	s := startTestRedis(t, ctx, RedisOptions{MaxClients: 64})
	info := s.Info()
	if info.Kind != "redis" || info.Version == "" || info.PID != s.PID() || info.PID <= 0 || len(info.SHA256) != 64 || !s.Alive() {
		t.Fatalf("info %+v", info)
	}
	n, err := s.Fill(ctx, DemoRows(64, 128), "item:{id}")
	if err != nil || n != 64 {
		t.Fatalf("fill: %d keys, %v", n, err)
	}
	cfg := resp.DefaultConfig()
	cfg.Batch, cfg.KeySpace = 8, 64
	spec, err := s.Spec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	spec.Engine = load.Config{EngineConfig: result.EngineConfig{Connections: 3, Pipeline: 2}}
	spec.Phases = result.Phases{Requests: 601, Recovery: 200 * time.Millisecond}
	spec.SamplerInterval = 100 * time.Millisecond
	smp := run.Measure(ctx, spec)
	if smp.Error != "" || smp.Load == nil {
		t.Fatalf("sample failed: %s", smp.Error)
	}
	if smp.Load.Requests != 601 || smp.Load.Errors+smp.Load.Unexpected+smp.Load.Timeouts != 0 {
		t.Fatalf("load: %d requests, %d errors, %v", smp.Load.Requests, smp.Load.Errors, smp.Load.Messages)
	}
	if got, want := smp.Stats["keyspace_hits"], float64(601*8); got != want || smp.Stats["keyspace_misses"] != 0 {
		t.Errorf("stats %v: want %v hits, 0 misses", smp.Stats, want)
	}
	if smp.Server == nil || smp.Server.Figures.WindowSeconds <= 0 || smp.Target == nil || smp.Target.Kind != "redis" {
		t.Errorf("no server figures or target: %+v %+v", smp.Server, smp.Target)
	}
	if !s.Alive() {
		t.Error("Measure stopped the long-lived server")
	}
	var drv, sys map[string]any
	if err := errors.Join(json.Unmarshal(spec.DriverConfig, &drv), json.Unmarshal(spec.SystemConfig, &sys)); err != nil || drv["addr"] == nil || sys["max_clients"] == nil {
		t.Errorf("driver config %s, system config %s: %v", spec.DriverConfig, spec.SystemConfig, err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Alive() {
		t.Error("alive after Stop")
	}
}

// TestRedisTokenNeverShown starts a server with a password and checks that
// a wrong token fails clearly, and that neither token appears anywhere.
func TestRedisTokenNeverShown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const right, wrong = "right-token-5f2a9", "wrong-token-8c1d7"
	t.Setenv("BENCHRIG_TEST_RIGHT", right)
	t.Setenv("BENCHRIG_TEST_WRONG", wrong)
	s := startTestRedis(t, ctx, RedisOptions{TokenEnv: "BENCHRIG_TEST_RIGHT"})
	_, err := StartRedis(ctx, RedisOptions{Addr: s.Addr(), TokenEnv: "BENCHRIG_TEST_WRONG"})
	if err == nil || !strings.Contains(err.Error(), "WRONGPASS") || strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), right) {
		t.Fatalf("wrong token: %v", err)
	}
	_, err = StartRedis(ctx, RedisOptions{Addr: s.Addr()})
	if err == nil || !strings.Contains(err.Error(), "requires AUTH") {
		t.Fatalf("no token: %v", err)
	}
	spec, err := s.Spec(resp.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(spec.DriverConfig)+string(spec.SystemConfig), right) || !strings.Contains(string(spec.DriverConfig)+string(spec.SystemConfig), "BENCHRIG_TEST_RIGHT") {
		t.Fatalf("config %s %s", spec.DriverConfig, spec.SystemConfig)
	}
	if err := spec.PreChecks[0].Run(ctx); err != nil {
		t.Fatalf("PING with the right token: %v", err)
	}
	// The server holds the token as a secret.Value: printed, by value or
	// pointer, it shows the placeholder.
	if s.token.Reveal() != right {
		t.Fatalf("token held: %q", s.token.Reveal())
	}
	secrettest.NoLeak(t, s, right)
	secrettest.NoLeak(t, struct{ Srv *RedisServer }{s}, right)
	if err := s.redactErr(errors.New("ERR " + right + " refused")); strings.Contains(err.Error(), right) {
		t.Fatalf("redactErr left the token: %v", err)
	}
}

// TestFillFromPGAndVerify fills redis from an ephemeral PostgreSQL and
// checks every key against row_to_json, then that the pre-flight passes and
// catches a corrupted and a missing key.
func TestFillFromPGAndVerify(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Second)
	defer cancel()
	const rows = 300
	pg, err := StartFillSource(ctx, "items", "id", rows)
	if err != nil {
		if errors.Is(err, pgephemeral.ErrNoBinaries) {
			testenv.Missing(t, testenv.Postgres, err.Error())
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Stop(context.Background()) })
	s := startTestRedis(t, ctx, RedisOptions{})
	const tmpl = `CRUD:{db}.public.items:{"id":{id}}`
	n, err := s.FillFromPG(ctx, secret.NewDSN(pg.DSN()), "items", "id", strings.ReplaceAll(tmpl, "{db}", "bench"))
	if err != nil || n != rows {
		t.Fatalf("fill: %d keys, %v", n, err)
	}

	// Every key equals row_to_json of its row, read independently.
	conn, err := pgclient.Connect(ctx, pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	want := map[int64]any{}
	r, err := conn.Query(ctx, "SELECT id, row_to_json(t)::text FROM items t")
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var id int64
		var text string
		if err := r.Scan(&id, &text); err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatal(err)
		}
		want[id] = v
		// The generated fill's rows are the demo table's rows.
		var demo any
		if err := json.Unmarshal(DemoRow(nil, id, pgclient.DefaultPayloadBytes), &demo); err != nil || !reflect.DeepEqual(demo, v) {
			t.Fatalf("DemoRow(%d) = %s, PostgreSQL has %s", id, DemoRow(nil, id, pgclient.DefaultPayloadBytes), text)
		}
	}
	if r.Err() != nil || len(want) != rows {
		t.Fatalf("read %d rows: %v", len(want), r.Err())
	}
	ids := make([]int64, 0, rows)
	for id := int64(1); id <= rows; id++ {
		ids = append(ids, id)
	}
	if err := s.CheckRows(ctx, tmpl, "bench", ids, func(i int) any { return want[ids[i]] }); err != nil {
		t.Fatal(err)
	}

	probe := ProbeIDs(rows)
	if err := s.VerifyAgainstPG(ctx, secret.NewDSN(pg.DSN()), "items", "id", tmpl, "bench", probe, 0); err != nil {
		t.Fatalf("pre-flight on a faithful fill: %v", err)
	}
	key5 := RedisKey(tmpl, "bench", 5)
	c, err := s.dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if _, err := c.do("SET", key5, `{"id":5,"revision":1,"payload":"stale"}`); err != nil {
		t.Fatal(err)
	}
	err = s.VerifyAgainstPG(ctx, secret.NewDSN(pg.DSN()), "items", "id", tmpl, "bench", probe, 0)
	if err == nil || !strings.Contains(err.Error(), strconv.Quote(key5)) || !strings.Contains(err.Error(), "stale") {
		t.Fatalf("pre-flight on a corrupted key: %v", err)
	}
	if _, err := c.do("DEL", key5); err != nil {
		t.Fatal(err)
	}
	err = s.VerifyAgainstPG(ctx, secret.NewDSN(pg.DSN()), "items", "id", tmpl, "bench", probe, 0)
	if err == nil || !strings.Contains(err.Error(), "redis has nil (no row)") {
		t.Fatalf("pre-flight on a missing key: %v", err)
	}

	// The reference of sampled validation holds the exact bytes filled.
	ref, err := Reference(PGRows(ctx, secret.NewDSN(pg.DSN()), "items", "id", 10), 10)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := s.MGet(ctx, []string{RedisKey(tmpl, "bench", 7)})
	if b, ok := ref(7); err != nil || !ok || string(vals[0]) != string(b) {
		t.Fatalf("reference of 7 %q, redis %q (%v)", b, vals, err)
	}
	if _, ok := ref(11); ok {
		t.Fatal("reference beyond its bound")
	}
}

// TestRedisEndpointWithoutINFO measures a RESP endpoint that answers MGET
// but not INFO (as pg_local_cache's may not), over TLS: no statistics, and
// a sample all the same.
func TestRedisEndpointWithoutINFO(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, err := resptest.Start(resptest.Options{TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for i := 1; i <= 4; i++ {
		srv.Set("item:"+strconv.Itoa(i), DemoRow(nil, int64(i), 16))
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, srv.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := StartRedis(ctx, RedisOptions{Addr: srv.Addr()}); err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("plain TCP to a TLS endpoint: %v", err)
	}
	s, err := StartRedis(ctx, RedisOptions{Addr: srv.Addr(), TLS: resp.TLSConfig{Enabled: true, CAFile: ca}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Stats() != nil || !strings.HasPrefix(s.Info().Settings["info"], "unsupported") || s.Info().Settings["tls"] != "on" {
		t.Fatalf("stats %v, info %+v", s.Stats(), s.Info())
	}
	cfg := resp.DefaultConfig()
	cfg.Batch, cfg.KeySpace = 4, 4
	spec, err := s.Spec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	spec.Engine = load.Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1}}
	spec.Phases = result.Phases{Requests: 50}
	smp := run.Measure(ctx, spec)
	if smp.Error != "" || smp.Load == nil || smp.Load.Requests != 50 || smp.Stats != nil {
		t.Fatalf("sample: %q %+v stats %v", smp.Error, smp.Load, smp.Stats)
	}
	if err := s.CheckRows(ctx, "item:{id}", "", []int64{1, 4, 5}, func(i int) any {
		if i == 2 {
			return nil
		}
		var v any
		_ = json.Unmarshal(DemoRow(nil, []int64{1, 4}[i], 16), &v)
		return v
	}); err != nil {
		t.Fatal(err)
	}
}

// TestCheckReserve: an endpoint that takes fewer connections than the
// matrix opens is refused before the load, saying how many it took.
func TestCheckReserve(t *testing.T) {
	needRedisServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv := startTestRedis(t, ctx, RedisOptions{MaxClients: 4})
	if err := srv.CheckReserve(ctx, 4); err != nil {
		t.Fatalf("4 of maxclients 4: %v", err)
	}
	err := srv.CheckReserve(ctx, 6)
	if err == nil || !strings.Contains(err.Error(), "connection reserve: 6 benchmark connections needed, connection 5 failed") {
		t.Fatalf("6 of maxclients 4: %v", err)
	}
}
