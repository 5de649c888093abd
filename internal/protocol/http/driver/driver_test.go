package http

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	stdhttp "net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
)

func runLoad(t *testing.T, cfg Config, lc load.Config, w load.Window) (*loadResult, error) {
	t.Helper()
	res, err := runEngine(t, cfg, lc, w)
	if err != nil {
		return nil, err
	}
	return &loadResult{res.Requests, res.Errors, res.Timeouts, res.Unexpected, res.Bytes, res.Messages}, nil
}

// runEngine runs one window of the load engine with the driver, on its
// event loops in a closed loop, on goroutines at a rate.
func runEngine(t *testing.T, cfg Config, lc load.Config, w ...load.Window) (*result.Load, error) {
	t.Helper()
	d, err := New(cfg)
	if err != nil {
		return nil, err
	}
	e, err := load.New(lc, d)
	if err != nil {
		return nil, err
	}
	if err := e.Open(context.Background()); err != nil {
		return nil, err
	}
	defer e.Close()
	return e.Run(context.Background(), w[0])
}

type loadResult struct {
	requests, errors, timeouts, unexpected, bytes int64
	messages                                      map[string]int64
}

func TestExactCountAgainstNetHTTP(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(stdhttp.HandlerFunc(func(w stdhttp.ResponseWriter, r *stdhttp.Request) {
		hits.Add(1)
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()
	for _, pipe := range []int{1, 8} {
		hits.Store(0)
		r, err := runLoad(t, Config{URL: srv.URL + "/x?y=1", Timeout: 5 * time.Second}, load.Config{EngineConfig: result.EngineConfig{Connections: 3, Pipeline: pipe}}, load.Window{Requests: 1001})
		if err != nil {
			t.Fatal(err)
		}
		if r.requests != 1001 || hits.Load() != 1001 {
			t.Errorf("pipeline %d: recorded %d, server saw %d, want 1001", pipe, r.requests, hits.Load())
		}
		if r.bytes <= 1001*5 {
			t.Errorf("pipeline %d: %d bytes read, want headers+body counted", pipe, r.bytes)
		}
	}
}

func TestUnexpectedStatusAndBodyCheck(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(stdhttp.HandlerFunc(func(w stdhttp.ResponseWriter, r *stdhttp.Request) {
		if n.Add(1)%4 == 0 {
			w.WriteHeader(500)
			fmt.Fprint(w, "boom")
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()
	r, err := runLoad(t, Config{URL: srv.URL}, load.Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1}}, load.Window{Requests: 100})
	if err != nil {
		t.Fatal(err)
	}
	if r.unexpected != 25 || r.messages["unexpected: status 500"] != 25 || r.requests != 75 {
		t.Errorf("got %+v", r)
	}
	want := "hello"
	n.Store(1) // every 4th from now: at n=4,8,...
	r, err = runLoad(t, Config{URL: srv.URL, ExpectStatus: 200, ExpectBody: &want}, load.Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1}}, load.Window{Requests: 12})
	if err != nil {
		t.Fatal(err)
	}
	if r.unexpected != 3 || r.requests != 9 {
		t.Errorf("expect-body: %+v", r)
	}
}

func TestChunkedAndHTTP10(t *testing.T) {
	srv := httptest.NewServer(stdhttp.HandlerFunc(func(w stdhttp.ResponseWriter, r *stdhttp.Request) {
		f := w.(stdhttp.Flusher)
		fmt.Fprint(w, "part one,")
		f.Flush() // forces chunked encoding
		fmt.Fprint(w, "part two")
	}))
	defer srv.Close()
	want := "part one,part two"
	r, err := runLoad(t, Config{URL: srv.URL, ExpectBody: &want}, load.Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 4}}, load.Window{Requests: 200})
	if err != nil {
		t.Fatal(err)
	}
	if r.requests != 200 || r.unexpected != 0 {
		t.Errorf("chunked: %+v", r)
	}
}

// rawServer answers every request on each connection with fn's bytes.
func rawServer(t *testing.T, fn func(c net.Conn, br *bufio.Reader, n int) bool) string {
	t.Helper()
	return serveConns(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for n := 1; ; n++ {
			// read one request head
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if line == "\r\n" {
					break
				}
			}
			if !fn(c, br, n) {
				return
			}
		}
	})
}

// serveConns serves each connection to a loopback listener with serve, on
// a goroutine of its own, and closes it when serve returns; it returns
// the listener's URL.
func serveConns(tb testing.TB, serve func(c net.Conn)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

func TestServerClosingConnections(t *testing.T) {
	// Connection: close after every response: all succeed, each reconnects.
	url := rawServer(t, func(c net.Conn, _ *bufio.Reader, n int) bool {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
		return false
	})
	r, err := runLoad(t, Config{URL: url}, load.Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1}}, load.Window{Requests: 50})
	if err != nil {
		t.Fatal(err)
	}
	if r.requests != 50 || r.errors != 0 {
		t.Errorf("connection: close: %+v", r)
	}
	for _, m := range modes {
		res, err := runEngine(t, Config{URL: url}, m.lc, load.Window{Requests: 50})
		if err != nil {
			t.Fatal(err)
		}
		// every response says close: each connection is reopened, for
		// that cause, and no request fails (2 connections: 48 or 49
		// reopens, as the last response on each needs none)
		if c := res.ReconnectCauses[driver.CauseClose]; res.Requests != 50 || res.Errors != 0 || c < 48 || c != res.Reconnects {
			t.Errorf("%s: Connection: close: %d ok, %d errors, reconnects %d by cause %v", m.name, res.Requests, res.Errors, res.Reconnects, res.ReconnectCauses)
		}
	}
	// Every 3rd request on a connection is read and the connection closed
	// without a byte of response: a reused connection the server closed,
	// so the GET is sent again on a new one (a reconnect, not an error).
	// Each connection answers 2: 30 requests take 15 connections, 14 re-sends.
	url = rawServer(t, func(c net.Conn, _ *bufio.Reader, n int) bool {
		if n%3 == 0 {
			return false
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	res, err := runEngine(t, Config{URL: url}, load.Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1}}, load.Window{Requests: 30})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || res.Requests != 30 || res.Resent != 14 || res.ReconnectCauses[driver.CauseIdleClosed] != 14 {
		t.Errorf("close before the response: %d ok, %d errors, %d resent, causes %v, %v", res.Requests, res.Errors, res.Resent, res.ReconnectCauses, res.Messages)
	}
	// A close in the middle of a response stays an error.
	url = rawServer(t, func(c net.Conn, _ *bufio.Reader, n int) bool {
		if n%3 == 0 {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Le")
			return false
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	r, err = runLoad(t, Config{URL: url}, load.Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1}}, load.Window{Requests: 30})
	if err != nil {
		t.Fatal(err)
	}
	if r.errors != 10 || r.requests != 20 || r.messages["error: connection closed by server"] != 10 {
		t.Errorf("abrupt close mid-response: %+v", r)
	}
}

func TestTimeoutsCounted(t *testing.T) {
	var total atomic.Int64
	url := rawServer(t, func(c net.Conn, _ *bufio.Reader, n int) bool {
		if total.Add(1) == 2 {
			time.Sleep(400 * time.Millisecond)
			return false
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	r, err := runLoad(t, Config{URL: url, Timeout: 100 * time.Millisecond}, load.Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1}}, load.Window{Requests: 5})
	if err != nil {
		t.Fatal(err)
	}
	if r.timeouts != 1 || r.requests != 4 {
		t.Errorf("timeouts: %+v", r)
	}
}

func TestNonHTTPPeerAndRefused(t *testing.T) {
	url := rawServer(t, func(c net.Conn, _ *bufio.Reader, n int) bool {
		io.WriteString(c, "-ERR unknown command 'GET'\r\n")
		return true
	})
	d, err := New(Config{URL: url, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = d.Probe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "want an HTTP/1.x status line") {
		t.Errorf("non-HTTP peer: %v", err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	d, _ = New(Config{URL: "http://" + addr + "/"})
	if err := d.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("refused: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{URL: "ftp://x/"}, {URL: "https:///nohost"}, {URL: "http:///nohost"}, {URL: "http://x/", HTTP2: true},
		{URL: "https://x/", H2C: true}, {URL: "h2c://x/", HTTP2: true}, {URL: "http://x/", TLS: &TLSConfig{Insecure: true}},
		{URL: "https://x/", TLS: &TLSConfig{Cert: "c.pem"}}, {URL: "https://x/", TLS: &TLSConfig{CACert: "/nonexistent.pem"}}, {URL: "http://x:99999/"},
		{URL: "http://x/", Method: "GE T"}, {URL: "http://x/", Headers: map[string]string{"Content-Length": "3"}},
		{URL: "http://x/", Headers: map[string]string{"X": "a\r\nb"}}, {URL: "http://x/", ExpectStatus: 42},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v: want error", c)
		}
	}
}

func TestRequestBytes(t *testing.T) {
	d, err := New(Config{URL: "http://127.0.0.1:81/a?b=c", Method: "post", Body: `{"a":1}`, Headers: map[string]string{"X-B": "2", "X-A": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "POST /a?b=c HTTP/1.1\r\nHost: 127.0.0.1:81\r\nUser-Agent: benchrig\r\nX-A: 1\r\nX-B: 2\r\nContent-Length: 7\r\n\r\n{\"a\":1}"
	if got := string(d.t.request); got != want {
		t.Errorf("request:\n%q\nwant\n%q", got, want)
	}
}

var _ driver.Conn = (*conn)(nil)
