package target

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Probe tells whether a target is ready to serve. Start polls it until it
// succeeds. Other packages (PostgreSQL, RESP) provide their own.
type Probe interface {
	// Ready makes one attempt and returns nil when the target is ready.
	// ctx bounds the attempt.
	Ready(ctx context.Context) error
	// String describes the probe for messages ("tcp 127.0.0.1:3000").
	// It must not reveal secrets.
	String() string
}

// Polling of a readiness probe.
const (
	// ProbeInterval is the pause between two probe attempts.
	ProbeInterval = 50 * time.Millisecond
	// ProbeAttemptTimeout bounds one probe attempt.
	ProbeAttemptTimeout = time.Second
)

// TCPProbe is ready when Addr accepts a TCP connection.
type TCPProbe struct {
	// Addr is host:port.
	Addr string
}

var _ Probe = TCPProbe{}

// Ready dials Addr once and closes the connection.
func (p TCPProbe) Ready(ctx context.Context) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", p.Addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// String describes the probe.
func (p TCPProbe) String() string { return "tcp " + p.Addr }

// HTTPProbe is ready when a GET of URL answers with Status (0: any 2xx).
type HTTPProbe struct {
	// URL is an http:// or https:// URL.
	URL string
	// Status is the expected status; 0 means any 2xx.
	Status int
}

var _ Probe = HTTPProbe{}

// probeClient is the client of readiness probes and checks: no keep-alive,
// so that no idle connection to the target outlives a probe or check.
var probeClient = &http.Client{
	Transport: func() http.RoundTripper {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DisableKeepAlives = true
		t.Proxy = nil
		return t
	}(),
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// readyClient is the readiness probes' client: probeClient's, but an
// https:// probe does not verify the certificate. Readiness asks whether
// the server answers; whether its certificate is trusted is the benchmark
// path's question, asked with the path's TLS settings (CA file, SNI name)
// by its first request, and a refusal there is a clear setup error.
var readyClient = &http.Client{
	Transport: func() http.RoundTripper {
		t := probeClient.Transport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
		return t
	}(),
	CheckRedirect: probeClient.CheckRedirect,
}

// Ready sends one GET and checks the status.
func (p HTTPProbe) Ready(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", redactURL(p.URL), err)
	}
	resp, err := readyClient.Do(req)
	if err != nil {
		return err // the client's errors already redact passwords
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if !statusOK(resp.StatusCode, p.Status) {
		return fmt.Errorf("GET %s: status %d, want %s", redactURL(p.URL), resp.StatusCode, wantStatus(p.Status))
	}
	return nil
}

// String describes the probe.
func (p HTTPProbe) String() string { return "http " + redactURL(p.URL) }

// statusOK reports whether got matches want (0: any 2xx).
func statusOK(got, want int) bool {
	if want == 0 {
		return got >= 200 && got <= 299
	}
	return got == want
}

// wantStatus describes an expected status.
func wantStatus(want int) string {
	if want == 0 {
		return "2xx"
	}
	return fmt.Sprint(want)
}

// errExited is returned by waitReady when the process exits first.
var errExited = errors.New("exited before ready")

// waitReady polls probe every ProbeInterval until it succeeds (err nil), the
// timeout passes (context.DeadlineExceeded), the process exits (errExited) or
// ctx is done (ctx.Err()). lastErr is the last probe error seen.
func waitReady(ctx context.Context, probe Probe, timeout time.Duration, exited <-chan struct{}) (lastErr error, err error) {
	deadline := time.Now().Add(timeout)
	for {
		remain := time.Until(deadline)
		if remain <= 0 {
			return lastErr, context.DeadlineExceeded
		}
		attempt := min(remain, ProbeAttemptTimeout)
		actx, cancel := context.WithTimeout(ctx, attempt)
		perr := probe.Ready(actx)
		cancel()
		select {
		case <-exited:
			return perr, errExited
		default:
		}
		if perr == nil {
			return nil, nil
		}
		if lastErr != nil && !time.Now().Before(deadline) {
			// This attempt was cut short by the deadline; the one
			// before says more.
			return lastErr, context.DeadlineExceeded
		}
		if ctx.Err() != nil {
			return perr, ctx.Err()
		}
		lastErr = perr
		wait := time.NewTimer(min(ProbeInterval, max(time.Until(deadline), 0)))
		select {
		case <-exited:
			wait.Stop()
			return lastErr, errExited
		case <-ctx.Done():
			wait.Stop()
			return lastErr, ctx.Err()
		case <-wait.C:
		}
	}
}
