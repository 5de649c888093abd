package redis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/pgephemeral"
	"github.com/benchrig/benchrig/internal/protocol/resp/respserver"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/testenv"
)

// TestSelfFilledVerify: a redis target that fills itself (fill: false)
// is not written to; verify_against_pg compares a probe batch with its
// source_pg table, passes when they agree, and refuses the run naming the
// first differing key when one differs. The server's AUTH token comes
// from token_file, and the extra INFO field is checked before the run.
func TestSelfFilledVerify(t *testing.T) {
	testenv.LookPath(t, testenv.Redis, "redis-server")
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Second)
	defer cancel()
	const rows = 200
	pg, err := respserver.StartFillSource(ctx, "items", "id", rows)
	if err != nil {
		if errors.Is(err, pgephemeral.ErrNoBinaries) {
			testenv.Missing(t, testenv.Postgres, err.Error())
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Stop(context.Background()) })
	t.Setenv("SELF_FILL_DSN", pg.DSN())
	tokenFile := t.TempDir() + "/token"
	os.WriteFile(tokenFile, []byte("tok-5150\n"), 0o600)
	t.Setenv("SELF_FILL_TOKEN", "tok-5150")
	srv, err := respserver.StartRedis(ctx, respserver.RedisOptions{Ephemeral: true, TokenEnv: "SELF_FILL_TOKEN"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	const tmpl = `CRUD:db.public.items:{"id":{id}}`
	// The server "fills itself": here the test does, before benchrig runs.
	if n, err := srv.FillFromPG(ctx, secret.NewDSN(pg.DSN()), "items", "id", tmpl); err != nil || n != rows {
		t.Fatalf("fill: %d, %v", n, err)
	}
	src := fmt.Sprintf(`name: self-fill
targets:
  cache:
    redis: {addr: %q, token_file: %q, fill: false, verify_against_pg: true, source_pg: {dsn_env: SELF_FILL_DSN}, info: [connected_clients]}
paths:
  mget: {resp: {command: MGET, key: 'CRUD:{db}.public.items:{"id":{id}}', db: db}}
workloads:
  all: {kind: uniform, rows: %d}
matrix: {targets: [cache], paths: [mget], workloads: [all], connections: [2], batches: [16]}
`, srv.Addr(), tokenFile, rows)
	prepare := func() error {
		s, err := suite.Parse("s.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Plan()
		if err != nil {
			t.Fatal(err)
		}
		sys, _ := New(system.Env{Suite: s, Name: "cache", Target: s.Targets["cache"], Cells: p.Cells})
		defer sys.Close(context.Background())
		_, err = sys.Prepare(ctx)
		return err
	}
	if err := prepare(); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	if keys, err := srv.MGet(ctx, []string{"item:1"}); err != nil || keys[0] != nil {
		t.Fatalf("fill: false wrote the demo rows: %q, %v", keys, err)
	}
	bad := `CRUD:db.public.items:{"id":42}`
	differs := func(yield func(int64, []byte) bool) error {
		yield(42, []byte(`{"id":42,"revision":9,"payload":"x"}`))
		return nil
	}
	if _, err := srv.Fill(ctx, differs, tmpl); err != nil {
		t.Fatal(err)
	}
	err = prepare()
	if err == nil || !strings.Contains(err.Error(), "key "+strconv.Quote(bad)+" (id 42)") {
		t.Fatalf("prepare with a differing key: %v", err)
	}
}
