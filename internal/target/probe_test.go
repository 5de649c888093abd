package target

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func itoa(n int) string { return strconv.Itoa(n) }

// countingProbe fails until its attempt number reaches readyAt (0: never).
type countingProbe struct {
	attempts atomic.Int32
	readyAt  int32
}

func (p *countingProbe) Ready(ctx context.Context) error {
	if n := p.attempts.Add(1); p.readyAt > 0 && n >= p.readyAt {
		return nil
	}
	return errors.New("not yet")
}

func (p *countingProbe) String() string { return "counting" }

func TestWaitReady(t *testing.T) {
	never := make(chan struct{})
	p := &countingProbe{readyAt: 3}
	last, err := waitReady(context.Background(), p, 10*time.Second, never)
	if err != nil || last != nil || p.attempts.Load() != 3 {
		t.Errorf("ready on 3rd attempt: last %v, err %v, attempts %d", last, err, p.attempts.Load())
	}

	p = &countingProbe{}
	last, err = waitReady(context.Background(), p, 200*time.Millisecond, never)
	if !errors.Is(err, context.DeadlineExceeded) || last == nil || last.Error() != "not yet" {
		t.Errorf("timeout: last %v, err %v", last, err)
	}
	if n := p.attempts.Load(); n < 1 {
		t.Errorf("%d attempts", n)
	}

	exited := make(chan struct{})
	close(exited)
	if _, err := waitReady(context.Background(), &countingProbe{}, 10*time.Second, exited); !errors.Is(err, errExited) {
		t.Errorf("exited: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := waitReady(ctx, &countingProbe{}, 10*time.Second, never); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

func TestHTTPProbe(t *testing.T) {
	var status atomic.Int32
	status.Store(503)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	ctx := context.Background()
	p := HTTPProbe{URL: srv.URL + "/health"}
	err := p.Ready(ctx)
	if err == nil || !strings.Contains(err.Error(), "status 503, want 2xx") {
		t.Errorf("503: %v", err)
	}
	status.Store(204)
	if err := p.Ready(ctx); err != nil {
		t.Errorf("204 with any 2xx: %v", err)
	}
	if err := (HTTPProbe{URL: srv.URL, Status: 200}).Ready(ctx); err == nil {
		t.Error("204 accepted where 200 is required")
	}
	status.Store(302)
	if err := (HTTPProbe{URL: srv.URL, Status: 302}).Ready(ctx); err != nil {
		t.Errorf("redirects are not followed: %v", err)
	}
	if got := (HTTPProbe{URL: "http://u:hunter2@127.0.0.1/"}).String(); got != "http http://u:[redacted]@127.0.0.1/" {
		t.Errorf("String %q", got)
	}
}

func TestTCPProbe(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := strings.TrimPrefix(srv.URL, "http://")
	p := TCPProbe{Addr: addr}
	if err := p.Ready(context.Background()); err != nil {
		t.Errorf("open port: %v", err)
	}
	srv.Close()
	if err := p.Ready(context.Background()); err == nil {
		t.Error("closed port reported ready")
	}
	if p.String() != "tcp "+addr {
		t.Errorf("String %q", p.String())
	}
}

func TestProbeSpec(t *testing.T) {
	if p, err := (ProbeSpec{}).Probe(); p != nil || err != nil {
		t.Errorf("empty: %v %v", p, err)
	}
	if p, err := (ProbeSpec{TCP: "127.0.0.1:5432"}).Probe(); err != nil || p != (TCPProbe{Addr: "127.0.0.1:5432"}) {
		t.Errorf("tcp: %v %v", p, err)
	}
	if p, err := (ProbeSpec{HTTP: "http://[::1]:80/x", Status: 204}).Probe(); err != nil || p != (HTTPProbe{URL: "http://[::1]:80/x", Status: 204}) {
		t.Errorf("http: %v %v", p, err)
	}
	for spec, want := range map[ProbeSpec]string{
		{TCP: "h:0"}:                     "port must be a number 1-65535",
		{TCP: "h:http"}:                  "port must be a number 1-65535",
		{Status: 200}:                    "ready.status 200: needs ready.http",
		{HTTP: "http:///x"}:              "no host",
		{HTTP: "http://h/", Status: 999}: "ready.status 999",
		{HTTP: "://"}:                    "not a URL",
	} {
		if _, err := spec.Probe(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", spec, err, want)
		}
	}
}

// An https:// readiness probe is ready when a server with a self-signed
// certificate answers: readiness does not judge the certificate (the
// benchmark path does, with its TLS settings).
func TestHTTPProbeHTTPSSelfSigned(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ts.Close()
	if err := (HTTPProbe{URL: ts.URL + "/"}).Ready(context.Background()); err != nil {
		t.Fatalf("https probe of a self-signed server: %v", err)
	}
	// checks keep verifying
	if err := RunCheck(context.Background(), Check{URL: ts.URL + "/"}); err == nil {
		t.Error("a check of a self-signed server passed without trusting it")
	}
}
