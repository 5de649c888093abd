package http

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	stdhttp "net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
)

// protoCounter answers "hello" and counts requests by protocol
// ("HTTP/1.1", "HTTP/2.0").
type protoCounter struct {
	mu    sync.Mutex
	seen  map[string]int
	total atomic.Int64
	// every, when set, answers request n with every(n, w, r) instead.
	every func(n int64, w stdhttp.ResponseWriter, r *stdhttp.Request) bool
}

func (p *protoCounter) ServeHTTP(w stdhttp.ResponseWriter, r *stdhttp.Request) {
	n := p.total.Add(1)
	p.mu.Lock()
	if p.seen == nil {
		p.seen = map[string]int{}
	}
	p.seen[r.Proto]++
	p.mu.Unlock()
	if p.every != nil && p.every(n, w, r) {
		return
	}
	fmt.Fprint(w, "hello")
}

func (p *protoCounter) count(proto string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[proto]
}

// startTLS starts a Go net/http server over TLS with the certificate,
// offering the ALPN protocols (h2 served when offered).
func startTLS(t *testing.T, h stdhttp.Handler, c testCert, protos []string, mod func(*tls.Config)) *httptest.Server {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	ts.EnableHTTP2 = true
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{c.TLS}, NextProtos: protos}
	if mod != nil {
		mod(ts.TLS)
	}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return ts
}

// openEngine opens an engine on the driver.
func openEngine(t *testing.T, d *Driver, lc load.Config) *load.Engine {
	t.Helper()
	e, err := load.New(lc, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func runWindow(t *testing.T, e *load.Engine, w load.Window) *result.Load {
	t.Helper()
	res, err := e.Run(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func clean(t *testing.T, what string, r *result.Load) {
	t.Helper()
	if r.Requests == 0 || r.Errors != 0 || r.Timeouts != 0 || r.Unexpected != 0 {
		t.Fatalf("%s: %d ok, %d errors, %d timeouts, %d unexpected: %v", what, r.Requests, r.Errors, r.Timeouts, r.Unexpected, r.Messages)
	}
}

// A Go net/http server over TLS offering h2 and http/1.1: by default the
// driver speaks HTTP/1.1 (ALPN http/1.1), with HTTP2 it speaks h2 with
// several streams per connection; closed loop and rate; every request is
// counted at the server under its protocol; the negotiated version,
// cipher and ALPN are what the server's handshake says; reconnects resume
// their session.
func TestTLSGoServerH1AndH2(t *testing.T) {
	cert := validCert(t, "go-tls")
	for _, maxV := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		srv := &protoCounter{}
		ts := startTLS(t, srv, cert, []string{"h2", "http/1.1"}, func(c *tls.Config) { c.MaxVersion = maxV })
		url := strings.Replace(ts.URL, "https://127.0.0.1", "https://localhost", 1)
		for _, h2 := range []bool{false, true} {
			for _, lc := range []load.Config{{EngineConfig: result.EngineConfig{Connections: 3, Pipeline: 4}}, {EngineConfig: result.EngineConfig{Connections: 3, Pipeline: 1, Rate: 500}}} {
				if !h2 && lc.Pipeline > 1 {
					lc.Pipeline = 2 // HTTP/1.1 pipelining over TLS
				}
				name := fmt.Sprintf("%s h2=%v %+v", tls.VersionName(maxV), h2, lc)
				d, err := New(Config{URL: url, Timeout: 5 * time.Second, HTTP2: h2, TLS: &TLSConfig{CACert: cert.CertFile}})
				if err != nil {
					t.Fatal(err)
				}
				if err := d.Probe(context.Background()); err != nil {
					t.Fatalf("%s: probe: %v", name, err)
				}
				e := openEngine(t, d, lc)
				before1, before2 := srv.count("HTTP/1.1"), srv.count("HTTP/2.0")
				res := runWindow(t, e, load.Window{Requests: 600, Duration: 20 * time.Second})
				clean(t, name, res)
				got1, got2 := srv.count("HTTP/1.1")-before1, srv.count("HTTP/2.0")-before2
				want1, want2 := int(res.Sent), 0
				if h2 {
					want1, want2 = 0, int(res.Sent)
				}
				if got1 != want1 || got2 != want2 {
					t.Errorf("%s: server saw %d HTTP/1.1 and %d HTTP/2.0 requests, want %d and %d", name, got1, got2, want1, want2)
				}
				n := d.Negotiated()
				wantALPN := "http/1.1"
				if h2 {
					wantALPN = "h2"
				}
				if n.TLSVersion != tls.VersionName(maxV) || n.ALPN != wantALPN || n.Cipher == "" || n.Protocol != wantALPN {
					t.Errorf("%s: negotiated %+v, want %s, ALPN %s", name, n, tls.VersionName(maxV), wantALPN)
				}
				// probe + 3 connections: every handshake after the first
				// resumes the session the probe's connection got.
				if n.Handshakes != 4 || n.Resumed < 1 {
					t.Errorf("%s: %d handshakes, %d resumed; want 4, at least 1 resumed", name, n.Handshakes, n.Resumed)
				}
				t.Logf("%s: %d ok, negotiated %+v", name, res.Requests, *n)
			}
		}
	}
}

// A client certificate is sent when the server requires one; without it
// the handshake fails before any request.
func TestTLSClientCertificate(t *testing.T) {
	server, client := validCert(t, "server"), validCert(t, "client")
	srv := &protoCounter{}
	ts := startTLS(t, srv, server, []string{"http/1.1"}, func(c *tls.Config) {
		c.ClientAuth, c.ClientCAs = tls.RequireAndVerifyClientCert, client.Pool
	})
	with, err := New(Config{URL: ts.URL, TLS: &TLSConfig{CACert: server.CertFile, Cert: client.CertFile, Key: client.KeyFile}})
	if err != nil {
		t.Fatal(err)
	}
	if err := with.Probe(context.Background()); err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
	without, err := New(Config{URL: ts.URL, TLS: &TLSConfig{CACert: server.CertFile}})
	if err != nil {
		t.Fatal(err)
	}
	if err := without.Probe(context.Background()); err == nil {
		t.Fatal("without a client certificate the probe passed")
	}
	if n := srv.total.Load(); n != 1 {
		t.Errorf("server answered %d requests, want the 1 with the certificate", n)
	}
}

// An expired certificate, a certificate for another name and an unknown
// authority are setup errors that say what to do, and no request reaches
// the server; --insecure goes through.
func TestTLSCertificateErrors(t *testing.T) {
	expired := makeCert(t, "expired", time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
	srv := &protoCounter{}
	ts := startTLS(t, srv, expired, []string{"h2", "http/1.1"}, nil)
	other := validCert(t, "other")
	ts2 := startTLS(t, srv, other, []string{"h2", "http/1.1"}, nil)
	for _, c := range []struct {
		url  string
		tls  TLSConfig
		want string
	}{
		{ts.URL, TLSConfig{CACert: expired.CertFile}, "certificate has expired"},
		{ts2.URL, TLSConfig{}, "unknown authority; --cacert FILE"},
		{ts2.URL, TLSConfig{CACert: other.CertFile, ServerName: "elsewhere.example"}, `not for "elsewhere.example"`},
	} {
		for _, h2 := range []bool{false, true} {
			d, err := New(Config{URL: c.url, TLS: &c.tls, HTTP2: h2})
			if err != nil {
				t.Fatal(err)
			}
			err = d.Probe(context.Background())
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--insecure") {
				t.Errorf("%s h2=%v: probe error %v, want one saying %q and --insecure", c.url, h2, err, c.want)
			}
			e, _ := load.New(load.Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1}}, d)
			if err := e.Open(context.Background()); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s h2=%v: open error %v, want %q", c.url, h2, err, c.want)
			}
		}
	}
	if n := srv.total.Load(); n != 0 {
		t.Fatalf("the server answered %d requests through a bad certificate", n)
	}
	d, err := New(Config{URL: ts.URL, TLS: &TLSConfig{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Probe(context.Background()); err != nil {
		t.Fatalf("--insecure: %v", err)
	}
}

// A server that offers only h2 (ALPN h2, and no HTTP/1.1 behind it) is
// spoken to in HTTP/2 without HTTP2 set; one offering both is spoken to
// in HTTP/1.1 unless asked.
func TestTLSAutoH2OnlyServer(t *testing.T) {
	cert := validCert(t, "h2only")
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert.TLS}, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	srv := &protoCounter{}
	h2s := &http2.Server{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				// x/net's ServeConn wants the handshake done
				if err := c.(*tls.Conn).Handshake(); err != nil {
					c.Close()
					return
				}
				h2s.ServeConn(c, &http2.ServeConnOpts{Handler: srv})
			}()
		}
	}()
	d, err := New(Config{URL: "https://" + ln.Addr().String() + "/", Timeout: 5 * time.Second, TLS: &TLSConfig{CACert: cert.CertFile}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := runWindow(t, openEngine(t, d, load.Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 8}}), load.Window{Requests: 400, Duration: 20 * time.Second})
	clean(t, "h2-only server", res)
	if n := d.Negotiated(); n.Protocol != ProtoH2 || n.ALPN != ProtoH2 {
		t.Errorf("negotiated %+v, want h2", n)
	}
	if got := srv.count("HTTP/2.0"); got != int(res.Sent)+1 {
		t.Errorf("server saw %d HTTP/2 requests, want %d (the probe's and the window's)", got, res.Sent+1)
	}
}

// h2c: cleartext HTTP/2 with prior knowledge to x/net's h2c handler, by
// h2c:// URL and by H2C on an http:// URL.
func TestH2C(t *testing.T) {
	srv := &protoCounter{}
	ts := httptest.NewServer(h2c.NewHandler(srv, &http2.Server{}))
	defer ts.Close()
	for _, cfg := range []Config{
		{URL: strings.Replace(ts.URL, "http://", "h2c://", 1) + "/"},
		{URL: ts.URL + "/", H2C: true},
	} {
		cfg.Timeout = 5 * time.Second
		d, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		before := srv.count("HTTP/2.0")
		for _, lc := range []load.Config{{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 16}}, {EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1, Rate: 400}},
			{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 4, Rate: 800}}} {
			res := runWindow(t, openEngine(t, d, lc), load.Window{Requests: 400, Duration: 20 * time.Second})
			clean(t, fmt.Sprintf("%s %+v", cfg.URL, lc), res)
		}
		if got := srv.count("HTTP/2.0") - before; got != 1200 {
			t.Errorf("%s: server saw %d HTTP/2 requests, want 1200", cfg.URL, got)
		}
		if n := d.Negotiated(); n == nil || n.Protocol != ProtoH2C {
			t.Errorf("%s: negotiated %+v, want h2c", cfg.URL, n)
		}
	}
	if got := srv.count("HTTP/1.1"); got != 0 {
		t.Errorf("%d HTTP/1.1 requests reached the h2c server", got)
	}
}

// A server that sends GOAWAY mid-run (Go's h2 server does after a
// response with Connection: close): the connections are reopened and
// the streams it did not process sent again; reconnects, not errors.
func TestH2GoawayIsAReconnect(t *testing.T) {
	cert := validCert(t, "goaway")
	// every 50th request closes, but never one of the first 8 of its
	// connection: re-sent streams open a connection, and a stream is re-sent
	// once (a second GOAWAY would count it as an error, by the engine's
	// rule).
	var mu sync.Mutex
	perConn := map[string]int{}
	srv := &protoCounter{every: func(n int64, w stdhttp.ResponseWriter, r *stdhttp.Request) bool {
		mu.Lock()
		perConn[r.RemoteAddr]++
		k := perConn[r.RemoteAddr]
		mu.Unlock()
		if n%50 == 0 && k > 8 {
			w.Header().Set("Connection", "close")
		}
		return false
	}}
	ts := startTLS(t, srv, cert, []string{"h2"}, nil)
	d, err := New(Config{URL: ts.URL, HTTP2: true, Timeout: 5 * time.Second, TLS: &TLSConfig{CACert: cert.CertFile}})
	if err != nil {
		t.Fatal(err)
	}
	for _, lc := range []load.Config{{EngineConfig: result.EngineConfig{Connections: 3, Pipeline: 8}}, {EngineConfig: result.EngineConfig{Connections: 3, Pipeline: 1, Rate: 500}},
		{EngineConfig: result.EngineConfig{Connections: 3, Pipeline: 8, Rate: 1000}}} {
		res := runWindow(t, openEngine(t, d, lc), load.Window{Requests: 1000, Duration: 30 * time.Second})
		clean(t, fmt.Sprintf("GOAWAY %+v", lc), res)
		if res.ReconnectCauses[CauseGoaway] < 3 || res.Reconnects != res.ReconnectCauses[CauseGoaway] {
			t.Errorf("%+v: reconnects %d by cause %v, want ≥ 5, all %q", lc, res.Reconnects, res.ReconnectCauses, CauseGoaway)
		}
		t.Logf("%+v: %d ok, reconnects %v, re-sent %d", lc, res.Requests, res.ReconnectCauses, res.Resent)
	}
	if n := d.Negotiated(); n.Resumed == 0 {
		t.Errorf("reconnects did not resume TLS sessions: %+v", n)
	}
}

// Streams the server resets are errors counted by message, and so are
// unexpected statuses; the connection carries on.
func TestH2ResetStreamsAndStatuses(t *testing.T) {
	srv := &protoCounter{every: func(n int64, w stdhttp.ResponseWriter, r *stdhttp.Request) bool {
		switch {
		case n%10 == 0:
			panic(stdhttp.ErrAbortHandler) // RST_STREAM INTERNAL_ERROR
		case n%10 == 5:
			w.WriteHeader(503)
			return true
		}
		return false
	}}
	ts := httptest.NewUnstartedServer(h2c.NewHandler(srv, &http2.Server{}))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.Start()
	defer ts.Close()
	d, err := New(Config{URL: ts.URL + "/", H2C: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	res := runWindow(t, openEngine(t, d, load.Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 10}}), load.Window{Requests: 1000, Duration: 30 * time.Second})
	reset := res.Messages["error: stream reset by server: INTERNAL_ERROR"]
	if reset != 100 || res.Errors != 100 || res.Unexpected != 100 || res.Messages["unexpected: status 503"] != 100 || res.Requests != 800 {
		t.Errorf("%d ok, %d errors, %d unexpected, messages %v; want 800 ok, 100 resets, 100 × status 503", res.Requests, res.Errors, res.Unexpected, res.Messages)
	}
	if res.Reconnects != 0 {
		t.Errorf("%d reconnects: a reset stream is not the connection's end (%v)", res.Reconnects, res.ReconnectCauses)
	}
}

// A peer that does not speak HTTP/2 is a setup error, not a run of
// errors.
func TestH2NotAnH2Server(t *testing.T) {
	ts := httptest.NewServer(stdhttp.HandlerFunc(func(w stdhttp.ResponseWriter, r *stdhttp.Request) {}))
	defer ts.Close()
	d, err := New(Config{URL: ts.URL + "/", H2C: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "did not answer in HTTP/2") {
		t.Errorf("probe of an HTTP/1.1 server with h2c: %v", err)
	}
	_ = net.ErrClosed
}

// Request bodies and several requests over HTTP/2: each request of the
// file reaches the server with its method and body, in its proportion;
// --servername sets SNI and the verified name when the URL is an IP.
func TestH2RequestsWithBodies(t *testing.T) {
	srv := &recordingServer{}
	cert := validCert(t, "bodies")
	ts := startTLS(t, srv, cert, []string{"h2"}, nil)
	reqs := threeRequests(t, strings.Replace(ts.URL, "https://", "http://", 1))
	for i := range reqs {
		reqs[i].URL = strings.Replace(reqs[i].URL, "http://", "https://", 1)
	}
	d, err := New(Config{Requests: reqs, HTTP2: true, Timeout: 5 * time.Second, TLS: &TLSConfig{CACert: cert.CertFile, ServerName: "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	res := runWindow(t, openEngine(t, d, load.Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 6}}), load.Window{Requests: 600, Duration: 20 * time.Second})
	clean(t, "h2 request file", res)
	got := count(srv.take())
	if want := map[string]int{seenGET: 300, seenPOST: 200, seenPUT: 100}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("server saw %v, want %v", got, want)
	}
}

// Over TLS the closed loop runs on the event loops: a Go server that
// closes idle connections after 1 s (it sends no close_notify) has them
// reopened, with resumed sessions, as reconnects and not errors; session
// tickets arriving on idle connections are not unsolicited bytes.
func TestTLSEventLoopIdleClose(t *testing.T) {
	cert := validCert(t, "idle")
	srv := &protoCounter{}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.IdleTimeout = time.Second
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{cert.TLS}, NextProtos: []string{"http/1.1"}}
	ts.StartTLS()
	defer ts.Close()
	d, err := New(Config{URL: ts.URL + "/", Timeout: 5 * time.Second, TLS: &TLSConfig{CACert: cert.CertFile}})
	if err != nil {
		t.Fatal(err)
	}
	e := openEngine(t, d, load.Config{EngineConfig: result.EngineConfig{Connections: 4, Pipeline: 1}})
	// Windows bounded by count (the minute only guards a hang): a window
	// of a fixed 500 ms saw no request complete on a loaded machine, where
	// four TLS reconnections may take longer than that.
	w := load.Window{Requests: 200, Duration: time.Minute}
	first := runWindow(t, e, w)
	time.Sleep(5 * time.Second) // five idle timeouts: closed even if the server's timer runs late
	second := runWindow(t, e, w)
	clean(t, "first window", first)
	clean(t, "second window", second)
	if n := second.ReconnectCauses[driver.CauseIdleClosed] + second.ReconnectCauses[driver.CauseReset]; n != 4 {
		t.Errorf("second window: reconnects %v, want the 4 idle-closed connections", second.ReconnectCauses)
	}
	// A request outstanding at a window's end may not have reached the
	// server's handler yet when it is counted.
	sent, outstanding := int(first.Sent+second.Sent), int(first.OutstandingAtEnd+second.OutstandingAtEnd)
	if got := srv.count("HTTP/1.1"); got < sent-outstanding || got > sent {
		t.Errorf("server saw %d requests, want %d (%d of them outstanding at a window's end)", got, sent, outstanding)
	}
	if n := d.Negotiated(); n.Handshakes != 8 || n.Resumed < 4 {
		t.Errorf("handshakes %d, resumed %d: want 8, the 4 reconnects resumed", n.Handshakes, n.Resumed)
	}
}

// Connection: close over TLS on the event loops: each closed connection
// is reopened (a new handshake, resumed) as a reconnect, not an error, and
// every request reaches the server.
func TestTLSEventLoopConnectionClose(t *testing.T) {
	cert := validCert(t, "close")
	srv := &protoCounter{every: func(n int64, w stdhttp.ResponseWriter, r *stdhttp.Request) bool {
		if n%20 == 0 {
			w.Header().Set("Connection", "close")
		}
		return false
	}}
	ts := startTLS(t, srv, cert, []string{"http/1.1"}, nil)
	d, err := New(Config{URL: ts.URL + "/", Timeout: 5 * time.Second, TLS: &TLSConfig{CACert: cert.CertFile}})
	if err != nil {
		t.Fatal(err)
	}
	res := runWindow(t, openEngine(t, d, load.Config{EngineConfig: result.EngineConfig{Connections: 3, Pipeline: 1}}), load.Window{Requests: 1000, Duration: 30 * time.Second})
	clean(t, "Connection: close over TLS", res)
	if c := res.ReconnectCauses[driver.CauseClose]; c < 40 || c != res.Reconnects {
		t.Errorf("reconnects %v (%d), want about 50, all %q", res.ReconnectCauses, res.Reconnects, driver.CauseClose)
	}
	if got := srv.total.Load(); got != res.Sent {
		t.Errorf("server answered %d, sent %d", got, res.Sent)
	}
	if n := d.Negotiated(); n.Resumed < res.Reconnects || n.Handshakes != res.Reconnects+3 {
		t.Errorf("%d handshakes, %d resumed after %d reconnects: want 3 + one per reconnect, each resumed", n.Handshakes, n.Resumed, res.Reconnects)
	}
}
