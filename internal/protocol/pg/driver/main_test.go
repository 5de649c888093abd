package pg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/pgephemeral"
	"github.com/benchrig/benchrig/internal/testenv"
)

// The package's shared server and dataset, set up by the first test that
// needs them and stopped by TestMain.
var (
	srvOnce sync.Once
	srv     *pgephemeral.Server
	srvErr  error
)

const (
	testRows    = 256
	testPayload = 48
)

func TestMain(m *testing.M) {
	code := m.Run()
	if srv != nil {
		if err := srv.Stop(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "stop server:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// startServer starts the ephemeral server and loads the items dataset.
func startServer(ctx context.Context) (*pgephemeral.Server, error) {
	s, err := pgephemeral.StartEphemeral(ctx, pgephemeral.Options{MaxConnections: 30})
	if err != nil {
		return nil, err
	}
	conn, err := pgclient.Connect(ctx, s.DSN())
	if err != nil {
		s.Stop(context.Background())
		return nil, err
	}
	defer conn.Close(context.Background())
	if err := pgclient.CreateDataset(ctx, conn, pgclient.Dataset{Rows: testRows, PayloadBytes: testPayload}); err != nil {
		s.Stop(context.Background())
		return nil, err
	}
	return s, nil
}

func needServer(t *testing.T) *pgephemeral.Server {
	t.Helper()
	srvOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		srv, srvErr = startServer(ctx)
	})
	if srvErr != nil {
		if errors.Is(srvErr, pgephemeral.ErrNoBinaries) {
			testenv.Missing(t, testenv.Postgres, srvErr.Error())
		}
		t.Fatal(srvErr)
	}
	return srv
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// controlConn is a connection of the test's own to server s (to prepare
// data, read statistics, look at pg_stat_activity), closed when the test
// ends, after the cleanups the test registers later.
func controlConn(t *testing.T, ctx context.Context, s *pgephemeral.Server) *pgx.Conn {
	t.Helper()
	ctl, err := pgclient.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close(context.Background()) })
	return ctl
}
