package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/pgephemeral"
	"github.com/benchrig/benchrig/internal/protocol/resp/respserver"
	"github.com/benchrig/benchrig/internal/resp/resptest"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/testenv"
)

// The pre-flight talks to real servers, which limit request and reply
// sizes: against one that refuses an MGET of more than 64 keys ("ERR
// response exceeds limit"), verify_against_pg probes in MGETs no larger
// than the suite's largest batch (at most 128, or verify_batch); when a
// probe is refused all the same, the error says which step, which command
// size, and how to lower it (issue 26, item 1).
func TestPreflightProbeBoundedBySuiteBatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const rows = 300
	pg, err := respserver.StartFillSource(ctx, "items", "id", rows)
	if err != nil {
		if errors.Is(err, pgephemeral.ErrNoBinaries) {
			testenv.Missing(t, testenv.Postgres, err.Error())
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Stop(context.Background()) })
	t.Setenv("PROBE_FILL_DSN", pg.DSN())
	srv, err := resptest.Start(resptest.Options{MaxMGETKeys: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	prepare := func(batches, verifyBatch string) error {
		src := fmt.Sprintf(`name: probe
targets:
  cache:
    redis: {addr: %q, fill_from_pg: {dsn_env: PROBE_FILL_DSN}, verify_against_pg: true%s}
paths:
  mget: {resp: {command: MGET, key: 'item:{id}'}}
workloads:
  all: {kind: uniform, rows: %d}
matrix: {targets: [cache], paths: [mget], workloads: [all], connections: [2], batches: [%s]}
`, srv.Addr(), verifyBatch, rows, batches)
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
	// The suite's largest batch, 64, bounds the probes: accepted.
	if err := prepare("1, 64", ""); err != nil {
		t.Fatalf("batches 1 and 64 against a server taking MGETs of up to 64 keys: %v", err)
	}
	// A largest batch of 256 would probe with 256: the default cap, 128,
	// bounds it, and the server refuses 128 — the error says where, what
	// size and how to lower it.
	err = prepare("256", "")
	for _, want := range []string{"pre-flight", "verify against PostgreSQL", "MGET of 128 keys", "ERR response exceeds limit", "lower the probe batch: verify_batch (now 128 keys per MGET"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("batch 256: error %v does not say %q", err, want)
		}
	}
	t.Logf("batch 256: %v", err)
	// verify_batch lowers it.
	if err := prepare("256", ", verify_batch: 32"); err != nil {
		t.Errorf("verify_batch 32: %v", err)
	}
}
