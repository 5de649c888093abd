package pgclient_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/pgclient"
)

func TestStatsDelta(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	ctl, err := pgclient.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close(ctx)
	d := pgclient.Dataset{Table: "stats_test", Rows: 50, PayloadBytes: 16}
	if err := pgclient.CreateDataset(ctx, ctl, d); err != nil {
		t.Fatal(err)
	}
	before, err := pgclient.TakeStats(ctx, ctl)
	if err != nil {
		t.Fatal(err)
	}
	// Work on another connection, closed afterwards so that its counters
	// are published when its backend exits.
	work, err := pgclient.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	const updates, reads = 7, 5
	for i := 1; i <= updates; i++ {
		if _, err := work.Exec(ctx, "UPDATE stats_test SET revision = revision + 1 WHERE id = $1", i); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= reads; i++ {
		var rev int64
		if err := work.QueryRow(ctx, "SELECT revision FROM stats_test WHERE id = $1", i).Scan(&rev); err != nil {
			t.Fatal(err)
		}
	}
	work.Close(ctx)
	var delta pgclient.Stats
	deadline := time.Now().Add(3*pgclient.StatsFlushDelay + 5*time.Second)
	for {
		after, err := pgclient.TakeStats(ctx, ctl)
		if err != nil {
			t.Fatal(err)
		}
		delta = after.Sub(before)
		if delta.TupUpdated >= updates || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if delta.TupUpdated != updates {
		t.Errorf("tup_updated delta %d, want %d", delta.TupUpdated, updates)
	}
	if delta.XactCommit < updates+reads {
		t.Errorf("xact_commit delta %d, want at least %d", delta.XactCommit, updates+reads)
	}
	if delta.TupFetched < updates+reads {
		t.Errorf("tup_fetched delta %d, want at least %d", delta.TupFetched, updates+reads)
	}
	if r := delta.HitRatio(); r < 0 || r > 1 {
		t.Errorf("HitRatio %v out of [0, 1]", r)
	}
	if delta.At.IsZero() {
		t.Error("Stats.At is zero")
	}
	if (pgclient.Stats{}).HitRatio() != 1 {
		t.Error("HitRatio of no reads should be 1")
	}
}

func TestServerInfoAndExplain(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	conn, err := pgclient.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	info, err := pgclient.ServerInfo(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if info.Version != s.Version() || info.VersionNum/10000 != s.Binaries().Major {
		t.Errorf("info %q %d, server %q major %d", info.Version, info.VersionNum, s.Version(), s.Binaries().Major)
	}
	for _, k := range []string{"fsync", "synchronous_commit", "jit", "max_connections", "shared_buffers", "superuser_reserved_connections"} {
		if info.Settings[k] != s.Settings()[k] && s.Settings()[k] != "" {
			t.Errorf("setting %s: server says %q, benchrig set %q", k, info.Settings[k], s.Settings()[k])
		}
		if info.Settings[k] == "" {
			t.Errorf("setting %s missing from ServerInfo", k)
		}
	}
	_, has16 := info.Settings["reserved_connections"]
	if has16 != (info.VersionNum >= 160000) {
		t.Errorf("reserved_connections present = %v on version %d", has16, info.VersionNum)
	}
	if err := pgclient.CreateDataset(ctx, conn, pgclient.Dataset{Table: "explain_test", Rows: 20}); err != nil {
		t.Fatal(err)
	}
	plan, err := pgclient.Explain(ctx, conn, "SELECT row_to_json(t) FROM explain_test t WHERE id = ANY($1)", []int64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	var parsed []map[string]any
	if err := json.Unmarshal([]byte(plan), &parsed); err != nil || len(parsed) != 1 || parsed[0]["Plan"] == nil {
		t.Errorf("plan %q is not EXPLAIN JSON: %v", plan, err)
	}
	if _, err := pgclient.Explain(ctx, conn, "SELECT * FROM no_such_table"); err == nil || !strings.Contains(err.Error(), "no_such_table") {
		t.Errorf("Explain of a bad query: %v", err)
	}
}

func TestCheckReserve(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	conn, err := pgclient.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	r, err := pgclient.ReadReserve(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(r.MaxConnections) != s.Settings()["max_connections"] || r.Reserved < 1 {
		t.Errorf("reserve %+v, server set max_connections %s", r, s.Settings()["max_connections"])
	}
	fits := r.Available() - 1
	if err := pgclient.CheckReserve(ctx, conn, fits); err != nil {
		t.Errorf("CheckReserve(%d) with %+v: %v", fits, r, err)
	}
	// Other tests may hold connections; read again right before the check.
	r, _ = pgclient.ReadReserve(ctx, conn)
	tooMany := r.MaxConnections
	err = pgclient.CheckReserve(ctx, conn, tooMany)
	want := fmt.Sprintf("postgres: %d benchmark connections + 1 control connection need %d slots, but max_connections %d − %d reserved leaves %d",
		tooMany, tooMany+1, r.MaxConnections, r.Reserved, r.MaxConnections-r.Reserved)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("CheckReserve(%d) = %v, want %q", tooMany, err, want)
	}
	if err := pgclient.CheckReserve(ctx, conn, -1); err == nil {
		t.Error("CheckReserve(-1) accepted")
	}
}
