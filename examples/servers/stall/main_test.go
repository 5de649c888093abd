package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the server and test goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var firstLine = regexp.MustCompile(`^listening on (\S+)\n`)

// serve runs the server with args until the test ends and returns its base
// URL.
func serve(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr lockedBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), &stdout, &stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("server did not shut down")
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := firstLine.FindStringSubmatch(stdout.String()); m != nil {
			return "http://" + m[1] + "/"
		}
		select {
		case err := <-done:
			t.Fatalf("server ended: %v; stderr %q", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("no listening line; stdout %q", stdout.String())
	return ""
}

// get requests url and returns the body.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return string(b)
}

func TestStallHoldsResponsesUntilTheStallEnds(t *testing.T) {
	const after, length = 100 * time.Millisecond, 400 * time.Millisecond
	url := serve(t, "-delay", "0", "-stall-after", after.String(), "-stall-for", length.String())
	t0 := time.Now() // no later than the server's first request
	if got := get(t, url); got != "hello" {
		t.Fatalf("body %q", got)
	}
	// Sent once the stall has begun (or later): its response cannot leave
	// before the stall ends, at least after+length after t0.
	time.Sleep(after + 20*time.Millisecond)
	get(t, url)
	if elapsed := time.Since(t0); elapsed < after+length {
		t.Errorf("response during the stall came %v after the first request, before the stall ended (%v)", elapsed, after+length)
	}
	if got := get(t, url); got != "hello" {
		t.Errorf("after the stall: body %q", got)
	}
}

func TestBurnTakesAtLeastTheDelay(t *testing.T) {
	const delay = 50 * time.Millisecond
	url := serve(t, "-burn", "-delay", delay.String())
	start := time.Now()
	get(t, url)
	if elapsed := time.Since(start); elapsed < delay {
		t.Errorf("burning response after %v, want at least %v", elapsed, delay)
	}
}

func TestBadFlags(t *testing.T) {
	var out bytes.Buffer
	for _, args := range [][]string{{"-delay", "-1s"}, {"-nope"}, {"-addr", "256.0.0.1:0"}} {
		if err := run(context.Background(), args, &out, &out); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
