package main

import (
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"

	"github.com/benchrig/benchrig/internal/resp/resptest"
)

// protoServer counts requests by protocol.
type protoServer struct {
	mu   sync.Mutex
	seen map[string]int
}

func (p *protoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.seen == nil {
		p.seen = map[string]int{}
	}
	p.seen[r.Proto]++
	p.mu.Unlock()
	fmt.Fprint(w, "hello")
}

func (p *protoServer) counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := map[string]int{}
	for k, v := range p.seen {
		m[k] = v
	}
	return m
}

// tlsServer starts a Go TLS server offering h2 and http/1.1 with cert
// (httptest's own when nil) and returns its URL and its certificate as a
// PEM file.
func tlsServer(t *testing.T, h http.Handler, cert *tls.Certificate) (url, caFile string) {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	ts.EnableHTTP2 = true
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.TLS = &tls.Config{NextProtos: []string{"h2", "http/1.1"}}
	if cert != nil {
		ts.TLS.Certificates = []tls.Certificate{*cert}
	}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	der := ts.Certificate().Raw
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return ts.URL + "/", caFile
}

// expiredCert is a self-signed certificate for 127.0.0.1 that expired
// yesterday.
func expiredCert(t *testing.T) *tls.Certificate {
	t.Helper()
	cp, kp, err := resptest.GenerateCertBetween(time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.X509KeyPair(cp, kp)
	if err != nil {
		t.Fatal(err)
	}
	return &c
}

// negotiatedOf reads the first sample of a results file printed by --json:
// its driver config's negotiated block and its statistics.
func negotiatedOf(t *testing.T, out string) (neg map[string]any, stats map[string]float64) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		var rec struct {
			Type   string             `json:"type"`
			Stats  map[string]float64 `json:"stats"`
			Config struct {
				Driver struct {
					Negotiated map[string]any `json:"negotiated"`
				} `json:"driver"`
			} `json:"config"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Type == "sample" {
			return rec.Config.Driver.Negotiated, rec.Stats
		}
	}
	t.Fatalf("no sample in the output:\n%s", out)
	return nil, nil
}

// benchrig http over https (HTTP/1.1 and --http2 with streams) and h2c://:
// every request at the server in its protocol, the negotiated TLS version,
// cipher and ALPN in the sample's config, handshakes in its statistics.
func TestHTTPSAndHTTP2(t *testing.T) {
	srv := &protoServer{}
	url, ca := tlsServer(t, srv, nil)
	out, stderr, code := invoke(t, "http", url, "--cacert", ca, "-c", "2", "-n", "200", "--json")
	if code != 0 {
		t.Fatalf("https: exit %d: %s", code, stderr)
	}
	neg, stats := negotiatedOf(t, out)
	if neg["tls_version"] != "TLS 1.3" || neg["alpn"] != "http/1.1" || neg["protocol"] != "http/1.1" || neg["cipher"] == "" {
		t.Errorf("https: negotiated %v", neg)
	}
	if _, ok := stats["tls_handshakes"]; !ok {
		t.Errorf("https: statistics %v lack tls_handshakes", stats)
	}
	out, stderr, code = invoke(t, "http", url, "--cacert", ca, "--http2", "--streams", "8", "-c", "2", "-n", "400", "--json")
	if code != 0 {
		t.Fatalf("--http2: exit %d: %s", code, stderr)
	}
	if neg, _ := negotiatedOf(t, out); neg["alpn"] != "h2" || neg["protocol"] != "h2" {
		t.Errorf("--http2: negotiated %v", neg)
	}
	// the checks before and after the load, and the counted requests
	if got := srv.counts(); got["HTTP/1.1"] != 202 || got["HTTP/2.0"] != 402 {
		t.Errorf("server saw %v, want 202 HTTP/1.1 and 402 HTTP/2.0", got)
	}

	h := &protoServer{}
	ts := httptest.NewServer(h2c.NewHandler(h, &http2.Server{}))
	defer ts.Close()
	out, stderr, code = invoke(t, "http", strings.Replace(ts.URL, "http://", "h2c://", 1)+"/", "--streams", "4", "-c", "2", "-n", "100", "--json")
	if code != 0 {
		t.Fatalf("h2c: exit %d: %s", code, stderr)
	}
	if neg, _ := negotiatedOf(t, out); neg["protocol"] != "h2c" {
		t.Errorf("h2c: negotiated %v", neg)
	}
	if got := h.counts(); got["HTTP/2.0"] != 102 || got["HTTP/1.1"] != 0 {
		t.Errorf("h2c server saw %v, want 102 HTTP/2.0", got)
	}
	// at a constant rate too, each connection carries up to --streams
	// requests at once (h2load's --rps with -m)
	out, stderr, code = invoke(t, "http", strings.Replace(ts.URL, "http://", "h2c://", 1)+"/", "--streams", "4", "-c", "2", "--rate", "400", "-n", "100", "--json")
	if code != 0 {
		t.Fatalf("h2c --rate: exit %d: %s", code, stderr)
	}
	found := false
	for _, line := range strings.Split(out, "\n") {
		var rec struct {
			Type string `json:"type"`
			Load struct {
				Mode     string `json:"mode"`
				Pipeline int    `json:"pipeline"`
				Requests int64  `json:"requests"`
				Rate     struct {
					Target    float64 `json:"target"`
					Scheduled int64   `json:"scheduled"`
				} `json:"rate"`
			} `json:"load"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Type != "sample" {
			continue
		}
		found = true
		if l := rec.Load; l.Mode != "rate" || l.Pipeline != 4 || l.Rate.Target != 400 || l.Rate.Scheduled != 100 || l.Requests != 100 {
			t.Errorf("h2c --rate: recorded %+v, want 100 requests at 400 req/s, 4 streams per connection", l)
		}
	}
	if !found {
		t.Fatalf("h2c --rate: no sample in the output:\n%s", out)
	}
	if got := h.counts(); got["HTTP/2.0"] != 204 {
		t.Errorf("h2c server saw %v, want 204 HTTP/2.0 in all", got)
	}
}

// An expired certificate is a setup error: exit 1, a message that says
// so and what to do, and no request reaches the server.
func TestHTTPSExpiredCertificate(t *testing.T) {
	srv := &protoServer{}
	url, ca := tlsServer(t, srv, expiredCert(t))
	for _, extra := range [][]string{nil, {"--http2"}} {
		args := append([]string{"http", url, "--cacert", ca, "-c", "2", "-d", "1"}, extra...)
		_, stderr, code := invoke(t, args...)
		if code != 1 || !strings.Contains(stderr, "certificate has expired") || !strings.Contains(stderr, "--insecure") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and the expired certificate", extra, code, stderr)
		}
	}
	if got := srv.counts(); len(got) != 0 {
		t.Errorf("the server answered %v through an expired certificate", got)
	}
	if _, stderr, code := invoke(t, "http", url, "--insecure", "-c", "1", "-n", "5"); code != 0 {
		t.Errorf("--insecure: exit %d: %s", code, stderr)
	}
}

// The TLS and HTTP/2 flags refuse what does not fit, by name.
func TestHTTPSFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"http", "http://127.0.0.1:1/", "--streams", "4"}, "--streams is HTTP/2's concurrent streams"},
		{[]string{"http", "http://127.0.0.1:1/", "--http2"}, "--http2 is HTTP/2 over TLS: it takes an https:// URL"},
		{[]string{"http", "https://127.0.0.1:1/", "--h2c"}, "--h2c is cleartext HTTP/2"},
		{[]string{"http", "https://127.0.0.1:1/", "--cert", "c.pem"}, "--cert and --key, a PEM client certificate and its private key, go together"},
		{[]string{"http", "http://127.0.0.1:1/", "--cacert", "ca.pem"}, "--cacert is for https:// URLs"},
		{[]string{"http", "https://127.0.0.1:1/", "--http2", "--streams", "0"}, "--streams must be 1–1024, got 0"},
		{[]string{"http", "https://127.0.0.1:1/", "--http2", "--streams", "4", "-p", "2"}, "give --streams or --pipeline, not both"},
	} {
		if _, stderr, code := invoke(t, c.args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// A suite's matrix takes pipeline depths above 1 with rates for HTTP/2
// paths (streams at a rate) and refuses them, naming the path, for
// HTTP/1.1 ones.
func TestSuiteRateWithStreams(t *testing.T) {
	dir := t.TempDir()
	write := func(paths, names string) string {
		f := filepath.Join(dir, "s.yaml")
		doc := "name: streams-at-a-rate\ntargets:\n  web: {address: {addr: \"127.0.0.1:1\"}}\npaths:\n" + paths +
			"matrix: {targets: [web], paths: [" + names + "], connections: [2], pipeline: [1, 8], rates: [1000]}\n"
		if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	h2 := "  h2: {http: {url: \"h2c://127.0.0.1:1/\"}}\n  tls: {http: {url: \"https://127.0.0.1:1/\", http2: true}}\n"
	out, stderr, code := invoke(t, "plan", write(h2, "h2, tls"))
	if code != 0 || !strings.Contains(out, "p=8") {
		t.Fatalf("HTTP/2 paths, pipeline 8 at a rate: exit %d\n%s%s", code, out, stderr)
	}
	_, stderr, code = invoke(t, "plan", write(h2+"  h1: {http: {url: \"http://127.0.0.1:1/\"}}\n", "h2, tls, h1"))
	if code != 2 || !strings.Contains(stderr, `matrix.pipeline[1]: pipeline 8 cannot be combined with rates for path "h1"`) ||
		strings.Contains(stderr, `path "h2"`) || strings.Contains(stderr, `path "tls"`) {
		t.Errorf("an HTTP/1.1 path with pipeline 8 at a rate: exit %d, stderr %q; want exit 2 naming h1 only", code, stderr)
	}
}
