package main

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/protocol/pg/driver/pgtest"
	"github.com/benchrig/benchrig/internal/protocol/pg/pgquick"
)

// Two quick pg runs in one process (as tests run them) each reach the
// server of their own --dsn: the DSN travels in the run, never through the
// process environment, where one run's would replace the other's (a run
// then measured the other's proxy and met its stall).
func TestQuickRunsKeepTheirOwnDSN(t *testing.T) {
	t.Parallel()
	srv, err := pgWindowServer(t)
	if err != nil {
		pgSkip(t, err)
	}
	var proxies [2]*pgtest.Proxy
	for i := range proxies {
		p, err := pgtest.Start(srv.DSN(), pgtest.Relay, pgtest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		proxies[i] = p
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var stderr [2]strings.Builder
	var errs [2]error
	for i, p := range proxies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = run(ctx, []string{"pg", "--dsn", p.DSN(), "-c", "2", "-d", "1s", "--warmup", "0s",
				"--baseline", "0s", "--settle", "0s", "--recovery", "0s", "--no-calibrate"}, &strings.Builder{}, &stderr[i])
		}()
	}
	// While the runs go, the process environment never holds a DSN.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for polling := true; polling; {
		if v, ok := os.LookupEnv(pgquick.DSNEnv); ok {
			t.Errorf("$%s is set in the process environment during a run (%d bytes)", pgquick.DSNEnv, len(v))
			polling = false
		}
		select {
		case <-done:
			polling = false
		case <-time.After(5 * time.Millisecond):
		}
	}
	<-done
	for i, p := range proxies {
		if errs[i] != nil {
			t.Errorf("run %d: %v\n%s", i+1, errs[i], stderr[i].String())
			continue
		}
		own, other := p.Addr(), proxies[1-i].Addr()
		if s := stderr[i].String(); !strings.Contains(s, own) || strings.Contains(s, other) {
			t.Errorf("run %d with --dsn …@%s: its notes name another server (want %s only):\n%s", i+1, own, own, s)
		}
	}
}
