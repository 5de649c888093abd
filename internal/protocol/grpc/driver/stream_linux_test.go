//go:build linux

package grpc

import (
	"bytes"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
	"github.com/benchrig/benchrig/internal/grpcephemeral"
	"github.com/benchrig/benchrig/internal/protocol/grpc/message"
	http "github.com/benchrig/benchrig/internal/protocol/http/driver"
)

// Each streaming kind against grpc-go: a server stream's messages
// counted (and its time to first message), a client stream's messages
// all sent before the answer, a bidirectional stream answered message by
// message; the server's own counts of calls and request messages equal
// benchrig's.
func TestStreamingKinds(t *testing.T) {
	t.Run("server", func(t *testing.T) {
		s, c := greeter(t, grpcephemeral.Options{}, "Lots", `{"count":5,"name":"n{id}"}`)
		c.ExpectMessages = 5
		d, w := runDriver(t, c, 2, 4, 200)
		if w.ok != 200 || len(w.msgs) != 0 {
			t.Errorf("%d OK, failures %v; want 200 OK", w.ok, w.msgs)
		}
		st := d.Stats()
		if st["grpc_calls"] != 200 || st["grpc_messages_received"] != 1000 || st["grpc_calls_with_messages"] != 200 || st["grpc_first_message_ms_total"] <= 0 {
			t.Errorf("stats %v; want 200 calls, 1000 messages, a time to first message", st)
		}
		if got := s.Calls()["Lots"]; got != 200 {
			t.Errorf("the server handled %d calls, want 200", got)
		}
		c.ExpectMessages = 4
		if _, w := runDriver(t, c, 1, 4, 20); w.msgs["unexpected: "+msgMessageCount] != 20 {
			t.Errorf("expecting 4 of 5 messages: failures %v", w.msgs)
		}
	})
	t.Run("client", func(t *testing.T) {
		s, c := greeter(t, grpcephemeral.Options{}, "Collect", `{"name":"n{id}"}`)
		c.StreamMessages, c.ExpectContains = 4, `"message":"collected 4"`
		if _, w := runDriver(t, c, 2, 4, 100); w.ok != 100 || len(w.msgs) != 0 {
			t.Errorf("%d OK, failures %v; want 100 OK", w.ok, w.msgs)
		}
		if calls, msgs := s.Calls()["Collect"], s.Messages(); calls != 100 || msgs != 400 {
			t.Errorf("the server handled %d calls and %d messages, want 100 and 400", calls, msgs)
		}
	})
	t.Run("bidi", func(t *testing.T) {
		s, c := greeter(t, grpcephemeral.Options{}, "Chat", `{"name":"n{id}","id":{id}}`)
		c.StreamMessages, c.ExpectMessages = 3, 3
		d, w := runDriver(t, c, 2, 4, 100)
		if w.ok != 100 || len(w.msgs) != 0 {
			t.Errorf("%d OK, failures %v; want 100 OK", w.ok, w.msgs)
		}
		if st := d.Stats(); st["grpc_messages_received"] != 300 {
			t.Errorf("stats %v; want 300 messages received", st)
		}
		if calls, msgs := s.Calls()["Chat"], s.Messages(); calls != 100 || msgs != 300 {
			t.Errorf("the server handled %d calls and %d messages, want 100 and 300", calls, msgs)
		}
	})
}

// Options that do not fit the method are refused.
func TestStreamingRefusals(t *testing.T) {
	_, c := greeter(t, grpcephemeral.Options{}, "SayHello", `{"name":"x"}`)
	c.StreamMessages = 3
	if _, err := New(c); err == nil {
		t.Error("stream_messages 3 with a unary method: accepted")
	}
	c.StreamMessages, c.ExpectMessages = 0, 2
	if _, err := New(c); err == nil {
		t.Error("expect messages with a unary method: accepted")
	}
	c.Call, c.ExpectMessages, c.ExpectContains = "benchrig.test.v1.Greeter/Lots", 0, "x"
	if _, err := New(c); err == nil {
		t.Error("expect message_contains with a server stream: accepted")
	}
}

// A stream's framing is walked the same whatever the DATA frames' cuts:
// byte by byte, whole, and a truncated or hostile stream is seen.
func TestStreamFraming(t *testing.T) {
	x := &streamExchange{exchange: &exchange{}}
	var body []byte
	for _, n := range []int{0, 3, 300, 70000} {
		body = append(body, 0, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		body = append(body, bytes.Repeat([]byte{'m'}, n)...)
	}
	for _, cut := range []int{1, 2, 5, 7, 4096, len(body)} {
		var s http.StreamState
		for p := body; len(p) > 0; {
			k := min(cut, len(p))
			x.Data(&s, p[:k])
			p = p[k:]
		}
		if s[sMessages] != 4 || s[sBytes] != 70303 || s[sPrefix] != 0 || s[sRemain] != 0 || s[sCompressed] != 0 {
			t.Errorf("cut %d: state %v; want 4 messages of 70303 bytes, whole", cut, s)
		}
	}
	var s http.StreamState
	x.Data(&s, body[:len(body)-1])
	if s[sRemain] != 1 {
		t.Errorf("truncated: state %v; want 1 byte to come", s)
	}
	s = http.StreamState{}
	x.Data(&s, []byte{2, 0, 0, 0, 0})
	if s[sPrefix] != -1 {
		t.Errorf("flag 2: state %v; want a framing error", s)
	}
	s = http.StreamState{}
	x.Data(&s, []byte{0, 0x7f, 0, 0, 0})
	if s[sPrefix] != -1 {
		t.Errorf("a 2 GiB message: state %v; want a framing error", s)
	}
}

// FuzzStreamFraming: whatever the bytes and the cuts of the DATA frames,
// the stream's walk agrees with message.Split over the whole body.
func FuzzStreamFraming(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 2, 'h', 'i', 0, 0, 0, 0, 0}, uint8(1))
	f.Add([]byte{1, 0, 0, 0, 1, 'x'}, uint8(3))
	f.Add([]byte{0, 0, 0, 0, 9, 1}, uint8(2))
	f.Add([]byte{3}, uint8(1))
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, body []byte, cut uint8) {
		x := &streamExchange{exchange: &exchange{}}
		var s http.StreamState
		fuzzcheck.Bound(t, len(body), func() {
			for p, k := body, int(cut)+1; len(p) > 0; p = p[min(k, len(p)):] {
				x.Data(&s, p[:min(k, len(p))])
			}
		})
		n, bytes, compressed := int64(0), int64(0), int64(0)
		err := message.Split(body, message.MaxMessage, func(c bool, m []byte) error {
			n++
			bytes += int64(len(m))
			if c {
				compressed++
			}
			return nil
		})
		whole := s[sPrefix] == 0 && s[sRemain] == 0
		if (err == nil) != whole {
			t.Fatalf("Split: %v; the walk: state %v", err, s)
		}
		if err == nil && (s[sMessages] != n || s[sBytes] != bytes || s[sCompressed] != compressed) {
			t.Fatalf("Split: %d messages, %d bytes, %d compressed; the walk: state %v", n, bytes, compressed, s)
		}
	})
}
