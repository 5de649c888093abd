package http

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// silentServer reads requests and never answers (until the test ends).
func silentServer(t *testing.T) string {
	quiet := make(chan struct{})
	t.Cleanup(func() { close(quiet) })
	return rawServer(t, func(net.Conn, *bufio.Reader, int) bool { <-quiet; return false })
}

// TestProbeBounded: the pre-flight request against a silent server ends
// at the request timeout, and with --timeout 0 (none for the load) at
// ProbeTimeout or its context's end, never hangs; Ctrl-C (a cancelled
// context) ends it at once with context.Canceled.
func TestProbeBounded(t *testing.T) {
	url := silentServer(t)
	d, err := New(Config{URL: url, Method: "GET", Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "no response within 300ms (the request timeout)") {
		t.Errorf("timeout 300ms: %v", err)
	}

	d0, err := New(Config{URL: url, Method: "GET"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d0.Probe(ctx) }()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled probe: %v, want context.Canceled", err)
		}
	case <-time.After(ProbeTimeout - time.Second):
		t.Fatal("a cancelled probe waited out the probe's bound")
	}
}
