package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/pgephemeral"
	"github.com/benchrig/benchrig/internal/protocol/pg/driver"
	"github.com/benchrig/benchrig/internal/testenv"
	"github.com/benchrig/benchrig/internal/workload"
)

// TestSuiteSettingsReadBack starts an ephemeral server with a suite's
// postgres.settings, shared_buffers, a preloaded library and an init_sql
// that creates its extension, and checks that the provenance is what the
// server says (SHOW on a connection of its own), that the settings are in
// effect on the benchmark connections (force_generic_plan: a path that
// sets no mode runs generic plans only) and that the extension and its
// version are recorded.
func TestSuiteSettingsReadBack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := StartPG(ctx, PGOptions{Ephemeral: true, MaxConnections: 12, SharedBuffers: "48MB",
		Settings: map[string]string{"plan_cache_mode": "force_generic_plan", "work_mem": "8MB",
			"shared_preload_libraries": "pg_stat_statements"},
		InitSQL: []string{"CREATE EXTENSION pg_stat_statements"},
		Dataset: pgclient.Dataset{Rows: 256, PayloadBytes: 32}})
	if err != nil {
		if errors.Is(err, pgephemeral.ErrNoBinaries) {
			testenv.Missing(t, testenv.Postgres, err.Error())
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	path := pgPath(pg.Any, workload.Hot, 4)
	if err := s.Prepare(ctx, []pg.Config{path}, 2); err != nil {
		t.Fatal(err)
	}

	conn, err := pgclient.Connect(ctx, s.DSN().Reveal())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var version string
	if err := conn.QueryRow(ctx, "SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements'").Scan(&version); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"plan_cache_mode": "force_generic_plan", "work_mem": "8MB", "shared_buffers": "48MB",
		"max_connections": "12", "shared_preload_libraries": "pg_stat_statements", "extension.pg_stat_statements": version}
	info := s.Info()
	for k, v := range want {
		if !strings.HasPrefix(k, "extension.") {
			var shown string
			if err := conn.QueryRow(ctx, "SHOW "+k).Scan(&shown); err != nil {
				t.Fatal(err)
			}
			if shown != v {
				t.Errorf("SHOW %s = %q, the suite asked for %q", k, shown, v)
			}
		}
		if info.Settings[k] != v {
			t.Errorf("provenance %s = %q, want %q (read back)", k, info.Settings[k], v)
		}
	}
	if info.Settings["extension.plpgsql"] == "" {
		t.Errorf("provenance %v lacks extension.plpgsql", info.Settings)
	}

	smp := planSample(t, ctx, s, path, 200*time.Millisecond)
	if g, c := smp.Stats[PlanKey("read", "generic")], smp.Stats[PlanKey("read", "custom")]; c != 0 || g != float64(smp.Load.Requests+smp.Load.OutstandingAnswered) {
		t.Errorf("generic %v custom %v over %d requests: force_generic_plan not in effect", g, c, smp.Load.Requests)
	}
	if m := smp.Target.Settings[PlansModeSetting]; m != "force_generic_plan" {
		t.Errorf("connections' plan_cache_mode %q, want force_generic_plan", m)
	}
}
