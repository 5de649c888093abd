//go:build linux

package grpc

import (
	"context"
	"io"
	stdhttp "net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/grpcephemeral"
	http "github.com/benchrig/benchrig/internal/protocol/http/driver"
	"github.com/benchrig/benchrig/internal/workload"
)

// tally is a driver.LoopWork of limit calls counting outcomes.
type tally struct {
	limit, next uint64
	ok          int
	msgs        map[string]int
}

func (w *tally) Claim(n int) (uint64, int) {
	if w.next >= w.limit {
		return 0, 0
	}
	n = int(min(uint64(n), w.limit-w.next))
	seq := w.next
	w.next += uint64(n)
	return seq, n
}

func (w *tally) Record(o *driver.Outcome, _ int64) {
	if o.Class == driver.OK {
		w.ok++
		return
	}
	w.msgs[o.Class.String()+": "+o.Msg]++
}

func (w *tally) Reconnected(string, int) {}

// greeter starts the test's grpc-go server and returns a config calling
// method on it with data.
func greeter(t *testing.T, opts grpcephemeral.Options, method, data string) (*grpcephemeral.Server, Config) {
	t.Helper()
	s := grpcephemeral.StartT(t, opts)
	proto, err := grpcephemeral.WriteProto(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	c.Addr, c.Proto, c.Call, c.Data = s.Addr(), []string{proto}, "benchrig.test.v1.Greeter/"+method, data
	c.Workload = workload.Config{Kind: workload.Hot, Rows: 100, Hot: 100}
	if opts.TLS {
		ca, err := s.CACertFile(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		c.TLS = &http.TLSConfig{CACert: ca}
	}
	return s, c
}

// run makes n calls on conns connections × streams streams of the
// driver's event loop.
func run(t *testing.T, c Config, conns, streams int, n uint64) *tally {
	t.Helper()
	_, w := runDriver(t, c, conns, streams, n)
	return w
}

// runDriver is run, returning the driver too.
func runDriver(t *testing.T, c Config, conns, streams int, n uint64) (*Driver, *tally) {
	t.Helper()
	d, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := d.OpenLoop(ctx, conns)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	w := &tally{limit: n, msgs: map[string]int{}}
	if err := l.Run(ctx, streams, 0, w); err != nil {
		t.Fatal(err)
	}
	return d, w
}

// Unary calls over h2c and TLS, on the event loop: every call answered
// OK with the reply its key asks for, and the server's own count equal
// to benchrig's.
func TestUnaryCalls(t *testing.T) {
	for _, tls := range []bool{false, true} {
		name := map[bool]string{false: "h2c", true: "tls"}[tls]
		t.Run(name, func(t *testing.T) {
			s, c := greeter(t, grpcephemeral.Options{TLS: tls}, "SayHello", `{"name":"n{id}","id":{id}}`)
			c.ExpectContains = `"message":"hello n`
			w := run(t, c, 2, 8, 1000)
			if w.ok != 1000 || len(w.msgs) != 0 {
				t.Errorf("%d OK, failures %v; want 1000 OK", w.ok, w.msgs)
			}
			if got := s.Calls()["SayHello"]; got != 1000 {
				t.Errorf("the server handled %d calls, want 1000", got)
			}
		})
	}
}

// The response message is compared with the expected one as messages.
func TestExpectJSON(t *testing.T) {
	_, c := greeter(t, grpcephemeral.Options{}, "SayHello", `{"name":"x","id":7}`)
	c.ExpectJSON = `{"id": "7", "message": "hello x"}`
	if w := run(t, c, 1, 4, 100); w.ok != 100 {
		t.Errorf("%d OK, failures %v; want 100 OK", w.ok, w.msgs)
	}
	c.ExpectJSON = `{"message": "hello y", "id": 7}`
	if w := run(t, c, 1, 4, 100); w.ok != 0 || w.msgs["unexpected: response differs from json_equal"] != 100 {
		t.Errorf("%d OK, failures %v; want 100 differing", w.ok, w.msgs)
	}
}

// Failed calls are counted by status code name, with the first
// grpc-message of each; an expected non-OK status counts as success.
func TestStatusCounted(t *testing.T) {
	s, c := greeter(t, grpcephemeral.Options{}, "Fail", `{"code":14,"message":"down for maintenance ✓"}`)
	w := run(t, c, 2, 4, 200)
	if w.ok != 0 || w.msgs["error: UNAVAILABLE: down for maintenance ✓"] != 200 || len(w.msgs) != 1 {
		t.Errorf("%d OK, failures %v; want 200 \"error: UNAVAILABLE: down for maintenance ✓\"", w.ok, w.msgs)
	}
	c.ExpectStatus = "UNAVAILABLE"
	if w := run(t, c, 1, 4, 50); w.ok != 50 {
		t.Errorf("expecting UNAVAILABLE: %d OK, failures %v; want 50 OK", w.ok, w.msgs)
	}
	c.Data = `{"code":0}`
	if w := run(t, c, 1, 1, 10); w.msgs["unexpected: OK, want UNAVAILABLE"] != 10 {
		t.Errorf("expecting UNAVAILABLE, answered OK: failures %v", w.msgs)
	}
	if got := s.Calls()["Fail"]; got != 260 {
		t.Errorf("the server handled %d calls, want 260", got)
	}
}

// A deadline sent as grpc-timeout ends slow calls as DEADLINE_EXCEEDED.
func TestDeadlineExceeded(t *testing.T) {
	_, c := greeter(t, grpcephemeral.Options{}, "Sleep", `{"ms":5000}`)
	c.Deadline = 50 * time.Millisecond
	w := run(t, c, 1, 10, 20)
	n := 0
	for m, k := range w.msgs {
		if strings.HasPrefix(m, "error: DEADLINE_EXCEEDED") {
			n += k
		}
	}
	if w.ok != 0 || n != 20 {
		t.Errorf("%d OK, failures %v; want 20 DEADLINE_EXCEEDED", w.ok, w.msgs)
	}
}

// The pre-flight refuses a method the server does not serve, naming it.
func TestProbeUnimplemented(t *testing.T) {
	_, c := greeter(t, grpcephemeral.Options{}, "Missing", `{"name":"x"}`)
	d, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	err = d.Probe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "benchrig.test.v1.Greeter/Missing") || !strings.Contains(err.Error(), "UNIMPLEMENTED") {
		t.Errorf("probe: %v; want UNIMPLEMENTED naming benchrig.test.v1.Greeter/Missing", err)
	}
	c.Call = "benchrig.test.v1.Greeter/SayHello"
	if d, err = New(c); err != nil {
		t.Fatal(err)
	}
	if err := d.Probe(context.Background()); err != nil {
		t.Errorf("probe of SayHello: %v", err)
	}
}

// On goroutine connections (the constant-rate path) calls go as well.
func TestGoroutineConnection(t *testing.T) {
	s, c := greeter(t, grpcephemeral.Options{}, "SayHello", `{"name":"n{id}","id":{id}}`)
	d, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := d.Open(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reqs, out := make([]driver.Request, 4), make([]driver.Outcome, 4)
	for b := range 25 {
		for i := range reqs {
			reqs[i].Seq = uint64(4*b + i)
		}
		if err := conn.Do(context.Background(), reqs, out); err != nil {
			t.Fatal(err)
		}
		for i, o := range out {
			if o.Class != driver.OK {
				t.Fatalf("call %d: %s %s", 4*b+i, o.Class, o.Msg)
			}
		}
	}
	if got := s.Calls()["SayHello"]; got != 100 {
		t.Errorf("the server handled %d calls, want 100", got)
	}
}

// A hostile server's broken message framing (a prefix announcing more
// bytes than follow) is a framing error, not a success; a response
// that is not gRPC says so.
func TestHostileFraming(t *testing.T) {
	for _, c := range []struct {
		name, ct string
		body     []byte
		want     string
	}{
		{"short message", "application/grpc", []byte{0, 0, 0, 0, 9, 1, 2}, "error: " + msgFraming},
		{"bad flag", "application/grpc", []byte{7, 0, 0, 0, 0}, "error: " + msgFraming},
		{"two messages", "application/grpc", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "unexpected: " + msgTwoMessages},
		{"html", "text/html", []byte("<html>"), `error: not a gRPC response: content-type "text/html"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(h2c.NewHandler(stdhttp.HandlerFunc(func(w stdhttp.ResponseWriter, r *stdhttp.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", c.ct)
				w.Header().Set("Trailer", "Grpc-Status")
				_, _ = w.Write(c.body)
				w.Header().Set("Grpc-Status", "0")
			}), &http2.Server{}))
			defer srv.Close()
			_, cfg := greeter(t, grpcephemeral.Options{}, "SayHello", `{"name":"x"}`)
			cfg.Addr = strings.TrimPrefix(srv.URL, "http://")
			w := run(t, cfg, 1, 2, 10)
			if w.msgs[c.want] != 10 {
				t.Errorf("outcomes %v (%d OK); want 10 %q", w.msgs, w.ok, c.want)
			}
		})
	}
}

// Building a call's message and judging its answer allocate nothing.
func TestExchangeAllocatesNothing(t *testing.T) {
	_, c := greeter(t, grpcephemeral.Options{}, "SayHello", `{"name":"n{id}","id":{id}}`)
	c.ExpectContains = "hello"
	d, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	x := d.x
	buf := make([]byte, 0, 256)
	seq := uint64(0)
	if n := testing.AllocsPerRun(1000, func() { buf = x.AppendBody(buf[:0], seq); seq++ }); n != 0 {
		t.Errorf("AppendBody: %.1f allocations per call, want 0", n)
	}
	r := http.Reply{Status: 200, Values: []string{"0", "", "application/grpc"}, Body: []byte{0, 0, 0, 0, 0}, Trailers: true}
	x.expect = nil
	if n := testing.AllocsPerRun(1000, func() { x.Judge(r) }); n != 0 {
		t.Errorf("Judge: %.1f allocations per call, want 0", n)
	}
}
