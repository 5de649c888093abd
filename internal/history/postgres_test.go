package history

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/history/synth"
	"github.com/benchrig/benchrig/internal/pgephemeral"
	"github.com/benchrig/benchrig/internal/plan"
	"github.com/benchrig/benchrig/internal/testenv"
)

// pgOpener starts an ephemeral PostgreSQL for the test (a missing one
// skips, or fails when CI=true) and opens handles on its database.
func pgOpener(t *testing.T) opener {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := pgephemeral.StartEphemeral(ctx, pgephemeral.Options{MaxConnections: 20})
	if err != nil {
		if errors.Is(err, pgephemeral.ErrNoBinaries) {
			testenv.Missing(t, testenv.Postgres, err.Error())
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	dsn := srv.DSN()
	return func(t *testing.T) *Store {
		t.Helper()
		s, err := OpenPostgres(context.Background(), "HISTORY_TEST_DSN", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

func TestHistoryPostgres(t *testing.T) {
	open := pgOpener(t)
	testHistory(t, open)

	// importers side by side: every file once (unique keys, retries).
	paths := writeRuns(t, synth.Options{Runs: 8, Seed: 9, Start: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)})
	errs := make(chan error, 2)
	for range 2 {
		s := open(t)
		go func() {
			for _, p := range paths {
				if _, err := s.Add(context.Background(), p, AddOptions{Replan: plan.RecordedEntries}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	runs, err := open(t).Runs(context.Background())
	if err != nil || len(runs) != 29+len(paths) {
		t.Fatalf("%d runs, want %d: %v", len(runs), 29+len(paths), err)
	}
}

// TestHistoryPostgresSecret: a DSN that cannot connect is never shown.
func TestHistoryPostgresSecret(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := OpenPostgres(ctx, "TEAM_DSN", "postgres://bench:hunter2-pw@127.0.0.1:1/history?connect_timeout=5")
	if err == nil || strings.Contains(err.Error(), "hunter2-pw") || !strings.Contains(err.Error(), "$TEAM_DSN") {
		t.Fatalf("error: %v", err)
	}
}
