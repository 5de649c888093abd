package run

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/system"
)

// procsDriver is okDriver that says its server's address and notes the
// GOMAXPROCS its requests ran under.
type procsDriver struct {
	okDriver
	addr string
	seen *atomic.Int64
}

func (d procsDriver) Addr() string { return d.addr }
func (d procsDriver) Open(context.Context, int) (driver.Conn, error) {
	return procsConn{d.seen}, nil
}

type procsConn struct{ seen *atomic.Int64 }

func (c procsConn) Do(ctx context.Context, reqs []driver.Request, out []driver.Outcome) error {
	c.seen.Store(int64(runtime.GOMAXPROCS(0)))
	return okConn{}.Do(ctx, reqs, out)
}
func (procsConn) Close() error { return nil }

// The client's GOMAXPROCS in a sample: the suite's client_gomaxprocs when
// set; beside a server on loopback, in a process that is benchrig's alone
// (OwnProcess), as many as its event loops (half the usable cores);
// otherwise left alone, beside a server sharing the process as against a
// remote one. It is restored after the sample.
func TestClientGOMAXPROCS(t *testing.T) {
	t.Setenv("GOMAXPROCS", "") // the test's own environment must not decide
	before := runtime.GOMAXPROCS(0)
	half := min(max(1, load.UsableCores()/2), before)
	for _, tc := range []struct {
		name  string
		addr  string
		procs int
		own   bool
		want  int
	}{
		{"set", "10.0.0.7:80", 3, false, 3},
		{"set beside", "127.0.0.1:80", 3, true, 3},
		{"beside", "127.0.0.1:80", 0, false, before},
		{"beside own", "127.0.0.1:80", 0, true, half},
		{"remote", "10.0.0.7:80", 0, false, before},
		{"remote own", "10.0.0.7:80", 0, true, before},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen atomic.Int64
			spec := system.Spec{Key: "k", Cell: "c", Protocol: "test", Driver: procsDriver{addr: tc.addr, seen: &seen},
				Engine:           load.Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1}},
				Phases:           result.Phases{Load: 30 * time.Millisecond},
				Thresholds:       result.Thresholds{P99: time.Hour},
				ClientGOMAXPROCS: tc.procs, OwnProcess: tc.own}
			s := Measure(context.Background(), spec)
			if s.Error != "" {
				t.Fatalf("sample failed: %s", s.Error)
			}
			if got := int(seen.Load()); got != tc.want {
				t.Errorf("GOMAXPROCS during the load %d, want %d", got, tc.want)
			}
			if got := runtime.GOMAXPROCS(0); got != before {
				t.Errorf("GOMAXPROCS after the sample %d, want %d restored", got, before)
			}
		})
	}
}
