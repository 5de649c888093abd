package redisephemeral

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// TestAdminCanceledAtOnce: against a server that accepts and never
// answers, canceling the context (Ctrl-C) ends PING and Do at once, with
// context.Canceled, instead of after the admin timeout.
func TestAdminCanceledAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // silent: read nothing, answer nothing
		}
	}()
	s := &Server{addr: ln.Addr().String()}
	for name, call := range map[string]func(context.Context) error{
		"ping": s.ping,
		"do":   func(ctx context.Context) error { _, err := s.Do(ctx, "INFO"); return err },
	} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- call(ctx) }()
		time.Sleep(50 * time.Millisecond) // let it block in the read
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: %v, want context.Canceled", name, err)
			}
		case <-time.After(defaultAdminTimeout):
			t.Fatalf("%s: still waiting %v after the cancel", name, defaultAdminTimeout)
		}
	}
}
