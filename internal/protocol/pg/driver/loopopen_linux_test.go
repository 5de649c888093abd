//go:build linux

package pg

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/workload"
)

// TestLoopOpensEveryConnectionInOrder: every connection of a loop reaches
// it in its own place, with a live backend of its own, and every one of
// them serves requests.
func TestLoopOpensEveryConnectionInOrder(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	const n = 8
	d := loopDriver(t, Config{Path: PreparedOne, Workload: workload.Config{Kind: workload.Uniform, Batch: 1, Seed: 3}})
	l, err := d.OpenLoop(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	lp := l.(*loop)
	if len(lp.conns) != n {
		t.Fatalf("%d connections on the loop, want %d", len(lp.conns), n)
	}
	seen := map[uint32]bool{}
	for i, c := range lp.conns {
		if c.I != i || c.St != evloop.Open || c.pid == 0 || seen[c.pid] {
			t.Errorf("connection %d: index %d, state %v, backend %d (seen before: %v); want index %d, open, a backend of its own", i, c.I, c.St, c.pid, seen[c.pid], i)
		}
		seen[c.pid] = true
	}
	ctl := controlConn(t, ctx, s)
	var live int
	if err := ctl.QueryRow(ctx, "SELECT count(*)::int FROM pg_stat_activity WHERE pid = ANY($1)", lp.PIDs()).Scan(&live); err != nil {
		t.Fatal(err)
	}
	if live != n {
		t.Errorf("%d of the loop's %d backends in pg_stat_activity, want all", live, n)
	}
	// Every connection answers: the loop starts a request on each at once,
	// four a connection in all.
	w := &testWork{limit: uint64(4 * n)}
	if err := l.Run(ctx, 1, 0, w); err != nil {
		t.Fatal(err)
	}
	if len(w.outs) != 4*n {
		t.Fatalf("%d outcomes, want %d", len(w.outs), 4*n)
	}
	for _, o := range w.outs {
		if o.Class != driver.OK {
			t.Fatalf("outcome %+v, want OK", o)
		}
	}
}

// TestLoopOpenFailureClosesEveryConnection: when the server refuses some
// of the connections (a role allowed 3, a loop of 12), OpenLoop names the
// refused connection with the server's reason and leaves no backend
// behind: the ones it had opened are ended.
func TestLoopOpenFailureClosesEveryConnection(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	ctl := controlConn(t, ctx, s)
	const pw = "Open-Limit-Secret"
	if _, err := ctl.Exec(ctx, "DO $$BEGIN CREATE ROLE openlimit LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END$$; "+
		"ALTER ROLE openlimit PASSWORD '"+pw+"' CONNECTION LIMIT 3; GRANT SELECT, UPDATE ON items TO openlimit"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = ctl.Exec(context.Background(), "REVOKE ALL ON items FROM openlimit; DROP ROLE IF EXISTS openlimit")
	})
	dsn := "host=127.0.0.1 port=" + strconv.Itoa(s.Port()) + " user=openlimit dbname=postgres sslmode=disable password=" + pw
	d, err := New(Config{DSN: secret.NewDSN(dsn), Path: PreparedOne, Workload: workload.Config{Kind: workload.Uniform, Batch: 1, Rows: testRows}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	l, err := d.OpenLoop(ctx, n)
	if err == nil {
		l.Close()
		t.Fatalf("OpenLoop of %d connections for a role allowed 3: no error", n)
	}
	// Opened one after another, the first three get in and the fourth is
	// refused.
	if !strings.HasPrefix(err.Error(), "pg: connection 4 of 12: ") || !strings.Contains(err.Error(), "too many connections for role") {
		t.Errorf("OpenLoop: %v; want \"pg: connection 4 of 12: …too many connections for role…\"", err)
	}
	if strings.Contains(err.Error(), pw) {
		t.Errorf("OpenLoop's error holds the password: %v", err)
	}
	// The backends it had opened end once they read Terminate (or the
	// socket's close): wait for them, 10 s at most.
	var left int
	for end := time.Now().Add(10 * time.Second); ; {
		if err := ctl.QueryRow(ctx, "SELECT count(*)::int FROM pg_stat_activity WHERE usename = 'openlimit'").Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 || time.Now().After(end) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if left != 0 {
		t.Errorf("%d backends of the refused loop still live, want none", left)
	}
}

// TestLoopOpenCancelled: a context cancelled before OpenLoop opens
// nothing and says so.
func TestLoopOpenCancelled(t *testing.T) {
	d := loopDriver(t, Config{Path: PreparedOne, Workload: workload.Config{Kind: workload.Uniform, Batch: 1}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l, err := d.OpenLoop(ctx, 3)
	if err == nil {
		l.Close()
		t.Fatal("OpenLoop with a cancelled context: no error")
	}
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "pg: connection 1 of 3: ") {
		t.Errorf("OpenLoop: %v; want \"pg: connection 1 of 3: …\" wrapping context.Canceled", err)
	}
}
