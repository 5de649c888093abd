//go:build linux

package grpc

import (
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/grpcephemeral"
)

// A method described by the server's reflection service is called as
// one described by its .proto file, over h2c and TLS; a server without
// reflection is refused, naming its address.
func TestReflection(t *testing.T) {
	for _, tls := range []bool{false, true} {
		t.Run(map[bool]string{false: "h2c", true: "tls"}[tls], func(t *testing.T) {
			s, c := greeter(t, grpcephemeral.Options{TLS: tls, Reflection: true}, "SayHello", `{"name":"n{id}","id":{id}}`)
			c.ExpectContains = `"message":"hello n`
			fromProto := run(t, c, 1, 4, 100)
			c.Proto, c.Reflection = nil, true
			fromServer := run(t, c, 1, 4, 100)
			if fromProto.ok != 100 || fromServer.ok != 100 {
				t.Errorf(".proto: %d OK %v; reflection: %d OK %v; want 100 each", fromProto.ok, fromProto.msgs, fromServer.ok, fromServer.msgs)
			}
			if got := s.Calls()["SayHello"]; got != 200 {
				t.Errorf("the server handled %d calls, want 200", got)
			}
		})
	}
	s, c := greeter(t, grpcephemeral.Options{}, "SayHello", `{"name":"x"}`)
	c.Proto, c.Reflection = nil, true
	if _, err := New(c); err == nil || !strings.Contains(err.Error(), s.Addr()) || !strings.Contains(err.Error(), "reflection") {
		t.Errorf("a server without reflection: %v; want a refusal naming %s", err, s.Addr())
	}
}

// gzip: the request messages go compressed (a server that does not
// accept gzip refuses them), compressed answers are decompressed for the
// expected message and counted in a stream.
func TestGzip(t *testing.T) {
	_, c := greeter(t, grpcephemeral.Options{Gzip: true}, "SayHello", `{"name":"n{id}","id":{id}}`)
	c.Compression, c.ExpectContains = "gzip", `"message":"hello n`
	if w := run(t, c, 1, 4, 100); w.ok != 100 {
		t.Errorf("templated, gzip: %d OK, failures %v", w.ok, w.msgs)
	}
	c.Data, c.ExpectContains, c.ExpectJSON = `{"name":"x","id":3}`, "", `{"message":"hello x","id":"3"}`
	d, w := runDriver(t, c, 1, 4, 100)
	if w.ok != 100 {
		t.Errorf("fixed, gzip: %d OK, failures %v", w.ok, w.msgs)
	}
	if plain := len(d.x.fixed); d.Config().RequestBytes != plain || plain < 5 || d.x.fixed[0] != 1 {
		t.Errorf("request_bytes %d, the compressed message %d bytes flagged %d", d.Config().RequestBytes, plain, d.x.fixed[0])
	}
	c.Call, c.Data, c.ExpectJSON, c.ExpectMessages = "benchrig.test.v1.Greeter/Lots", `{"count":4,"name":"z"}`, "", 4
	if w := run(t, c, 1, 4, 50); w.ok != 50 {
		t.Errorf("a stream, gzip: %d OK, failures %v", w.ok, w.msgs)
	}

	_, c = greeter(t, grpcephemeral.Options{}, "SayHello", `{"name":"x"}`)
	c.Compression = "gzip"
	w = run(t, c, 1, 2, 10)
	n := 0
	for m, k := range w.msgs {
		if strings.Contains(m, "UNIMPLEMENTED") {
			n += k
		}
	}
	if n != 10 {
		t.Errorf("gzip to a server without it: failures %v; want 10 UNIMPLEMENTED", w.msgs)
	}
}
