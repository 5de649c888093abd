package target

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
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
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	return ln.Addr().String()
}

// TestChecksCanceledAtOnce: Ctrl-C (a canceled ctx) during a readiness
// wait or a pre-flight check against a silent server returns at once with
// context.Canceled, not after CheckTimeout or the start timeout.
func TestChecksCanceledAtOnce(t *testing.T) {
	addr := silentListener(t)
	for name, call := range map[string]func(context.Context) error{
		"check": func(ctx context.Context) error { return RunCheck(ctx, Check{URL: "http://" + addr + "/"}) },
		"http probe": func(ctx context.Context) error {
			_, err := waitReady(ctx, HTTPProbe{URL: "http://" + addr + "/"}, time.Minute, nil)
			return err
		},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- call(ctx) }()
		time.Sleep(50 * time.Millisecond) // let it block on the silent server
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: %v, want context.Canceled", name, err)
			}
		case <-time.After(CheckTimeout):
			t.Fatalf("%s: still waiting %v after the cancel", name, CheckTimeout)
		}
	}
}
