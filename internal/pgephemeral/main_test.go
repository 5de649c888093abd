package pgephemeral

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/testenv"
)

// srv is the package's shared server, started by the first test that
// needs it (so that fuzzing workers start none) and stopped by TestMain.
var (
	srvOnce sync.Once
	srv     *Server
	srvErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if srv != nil {
		if err := srv.Stop(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "stop shared server:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// needServer returns the shared server, or skips (outside CI) when there
// are no PostgreSQL binaries.
func needServer(t *testing.T) *Server {
	t.Helper()
	srvOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		srv, srvErr = StartEphemeral(ctx, Options{MaxConnections: 20})
	})
	if srvErr != nil {
		skipOrFatal(t, srvErr)
	}
	return srv
}

func skipOrFatal(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, ErrNoBinaries) {
		testenv.Missing(t, testenv.Postgres, err.Error())
	}
	t.Fatal(err)
}

// testCtx is a context bounded for one test.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
