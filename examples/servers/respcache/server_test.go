package main

import (
	"context"
	"testing"
)

func TestParseKey(t *testing.T) {
	prefix, suffix, err := splitTemplate(`CRUD:db.public.items:{"id":{id}}`)
	if err != nil {
		t.Fatal(err)
	}
	s := &server{cfg: config{prefix: prefix, suffix: suffix}}
	for key, want := range map[string]int64{
		`CRUD:db.public.items:{"id":42}`: 42,
		`CRUD:db.public.items:{"id":0}`:  0,
		`CRUD:db.public.items:{"id":}`:   -1,
		`CRUD:db.public.items:{"id":-3}`: -1,
		`item:42`:                        -1,
		`CRUD:db.public.items:{"id":4x}`: -1,
	} {
		if got := s.parse([]byte(key)); got != want {
			t.Errorf("parse(%q) = %d, want %d", key, got, want)
		}
	}
	for _, bad := range []string{"item", "{id}:{id}"} {
		if _, _, err := splitTemplate(bad); err == nil {
			t.Errorf("splitTemplate(%q): no error", bad)
		}
	}
}

// TestSessionAuth: without AUTH only AUTH and QUIT are answered; a wrong
// token is refused; the right one opens PING and INFO (no database needed).
func TestSessionAuth(t *testing.T) {
	c := &session{s: &server{cfg: config{token: "t0k"}}}
	do := func(args ...string) string {
		a := make([][]byte, len(args))
		for i := range args {
			a[i] = []byte(args[i])
		}
		out, err := c.do(context.Background(), nil, a)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	for _, step := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"PING"}, "-NOAUTH Authentication required.\r\n"},
		{[]string{"MGET", "k"}, "-NOAUTH Authentication required.\r\n"},
		{[]string{"AUTH", "nope"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{[]string{"AUTH", "t0k"}, "+OK\r\n"},
		{[]string{"ping"}, "+PONG\r\n"},
		{[]string{"INFO"}, "$45\r\n# Stats\r\nkeyspace_hits:0\r\nkeyspace_misses:0\r\n\r\n"},
		{[]string{"SET", "k", "v"}, "-ERR unknown command or wrong number of arguments for 'SET'\r\n"},
	} {
		if got := do(step.cmd...); got != step.want {
			t.Errorf("%v: %q, want %q", step.cmd, got, step.want)
		}
	}
}
