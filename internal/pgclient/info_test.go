package pgclient_test

import (
	"testing"

	"github.com/benchrig/benchrig/internal/pgclient"
)

// TestServerInfoExtras checks the provenance read back from the server:
// extra settings by name (NotSet for one the server does not know, a
// placeholder's value as SHOW gives it), the installed extensions with
// their versions, and shared_preload_libraries and plan_cache_mode among
// InfoSettings.
func TestServerInfoExtras(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	conn, err := pgclient.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET benchrig_test.knob = 'on'"); err != nil {
		t.Fatal(err)
	}
	info, err := pgclient.ServerInfo(ctx, conn, "work_mem", "benchrig_test.knob", "benchrig_test.absent")
	if err != nil {
		t.Fatal(err)
	}
	var workMem string
	if err := conn.QueryRow(ctx, "SHOW work_mem").Scan(&workMem); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"work_mem": workMem, "benchrig_test.knob": "on", "benchrig_test.absent": pgclient.NotSet, "plan_cache_mode": "auto"} {
		if got := info.Settings[k]; got != want {
			t.Errorf("setting %s = %q, want %q", k, got, want)
		}
	}
	if _, ok := info.Settings["shared_preload_libraries"]; !ok {
		t.Errorf("shared_preload_libraries missing from %v", info.Settings)
	}
	if info.Extensions["plpgsql"] == "" {
		t.Errorf("extensions %v: want plpgsql with its version", info.Extensions)
	}
}
