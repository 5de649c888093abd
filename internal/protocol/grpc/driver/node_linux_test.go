//go:build linux

package grpc

import (
	"context"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/grpcephemeral"
	"github.com/benchrig/benchrig/internal/workload"
)

// The same calls against @grpc/grpc-js on Node 24 (examples/grpc): each
// streaming kind, a status, reflection, gzip, and the pre-flight's
// refusal of a method it does not serve.
func TestNodeServer(t *testing.T) {
	n := grpcephemeral.StartNode(t, grpcephemeral.NodeOptions{})
	proto, err := grpcephemeral.WriteProto(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := func(method, data string) Config {
		c := DefaultConfig()
		c.Addr, c.Proto, c.Call, c.Data = n.Addr(), []string{proto}, "benchrig.test.v1.Greeter/"+method, data
		c.Workload = workload.Config{Kind: workload.Hot, Rows: 100, Hot: 100}
		return c
	}
	for _, c := range []struct {
		name string
		cfg  func() Config
		want string // the failures' message, "" for every call OK
	}{
		{"unary", func() Config {
			c := cfg("SayHello", `{"name":"x","id":7}`)
			c.ExpectJSON = `{"message":"hello x","id":"7"}`
			return c
		}, ""},
		{"server stream", func() Config {
			c := cfg("Lots", `{"count":5,"name":"n{id}"}`)
			c.ExpectMessages = 5
			return c
		}, ""},
		{"client stream", func() Config {
			c := cfg("Collect", `{"name":"n{id}"}`)
			c.StreamMessages, c.ExpectContains = 4, `"message":"collected 4"`
			return c
		}, ""},
		{"bidi", func() Config {
			c := cfg("Chat", `{"name":"n{id}","id":{id}}`)
			c.StreamMessages, c.ExpectMessages = 3, 3
			return c
		}, ""},
		{"status", func() Config { return cfg("Fail", `{"code":14,"message":"node says no"}`) }, "error: UNAVAILABLE: node says no"},
		{"reflection", func() Config {
			c := cfg("SayHello", `{"name":"r"}`)
			c.Proto, c.Reflection, c.ExpectContains = nil, true, `"message":"hello r"`
			return c
		}, ""},
		{"gzip", func() Config {
			c := cfg("SayHello", `{"name":"n{id}","id":{id}}`)
			c.Compression, c.ExpectContains = "gzip", `"message":"hello n`
			return c
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := run(t, c.cfg(), 2, 4, 100)
			switch {
			case c.want == "" && (w.ok != 100 || len(w.msgs) != 0):
				t.Errorf("%d OK, failures %v; want 100 OK", w.ok, w.msgs)
			case c.want != "" && w.msgs[c.want] != 100:
				t.Errorf("%d OK, failures %v; want 100 %q", w.ok, w.msgs, c.want)
			}
		})
	}
	d, err := New(cfg("Missing", `{"name":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "UNIMPLEMENTED") || !strings.Contains(err.Error(), "Greeter/Missing") {
		t.Errorf("probe of Missing on Node: %v; want UNIMPLEMENTED naming it", err)
	}
}
