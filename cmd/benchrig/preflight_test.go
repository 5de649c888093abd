package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/exitcode"
	httpdrv "github.com/benchrig/benchrig/internal/protocol/http/driver"
)

// silentListener accepts connections and never answers.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return ln.Addr().String()
}

// TestPreflightInterruptAndBounds: against a silent server the pre-flight
// (HTTP's first request, RESP's PING) ends at the request timeout; with
// --timeout 0 (no request timeout) a Ctrl-C still ends it at once, where
// it used to hang for ever (HTTP) or wait out a fixed 10 s (RESP).
func TestPreflightInterruptAndBounds(t *testing.T) {
	addr := silentListener(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"http timeout", []string{"http", "http://" + addr + "/", "--timeout", "500ms", "-d", "1s", "--no-calibrate"}, "no response within 500ms (the request timeout)"},
		{"resp timeout", []string{"resp", "--addr", addr, "--timeout", "500ms", "-d", "1s", "--no-calibrate"}, "PING: no reply within 500ms"},
		{"http ctrl-c", []string{"http", "http://" + addr + "/", "--timeout", "0", "-d", "1s", "--no-calibrate"}, "context canceled"},
		{"resp ctrl-c", []string{"resp", "--addr", addr, "--timeout", "0", "-d", "1s", "--no-calibrate"}, "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if strings.HasSuffix(tc.name, "ctrl-c") {
				time.AfterFunc(300*time.Millisecond, cancel)
			}
			var o, e bytes.Buffer
			done := make(chan int, 1)
			go func() { done <- exitcode.Of(run(ctx, tc.args, &o, &e), &e) }()
			select {
			case code := <-done:
				if code != 1 || !strings.Contains(e.String()+o.String(), tc.want) {
					t.Errorf("exit %d, stderr %q; want exit 1 and %q\n%s", code, e.String(), tc.want, o.String())
				}
			case <-time.After(httpdrv.ProbeTimeout - 2*time.Second):
				t.Fatalf("still in the pre-flight after %s", httpdrv.ProbeTimeout-2*time.Second)
			}
		})
	}
}
