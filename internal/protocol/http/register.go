// Package http is the HTTP protocol of benchrig: its suite section
// (paths.NAME.http), how a path becomes a driver on a server reached at an
// address, and its registration with the suite and the systems. The client
// itself is in the driver subpackage.
package http

import (
	"context"
	"strings"

	"github.com/benchrig/benchrig/internal/protocol/http/driver"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
)

// Key is the protocol's name in suites and results.
const Key suite.Protocol = "http"

func init() {
	suite.RegisterProtocol(suite.ProtocolInfo{Key: Key, NewPath: func() suite.PathSpec { return new(Path) },
		Generic: true, GenericDefault: true})
	system.RegisterAddress(Key, addressDriver)
}

// Config is the HTTP driver config of a suite path with placeholders
// filled; a requests_file is read (errors name file:line). seed seeds
// order: random.
func Config(h *Path, vars map[string]string, seed uint64) (http.Config, error) {
	dc := http.DefaultConfig()
	dc.URL = suite.Expand(h.URL, vars)
	dc.Method = h.Method
	dc.Headers = h.Headers
	dc.Body = suite.Expand(h.Body, vars)
	dc.ExpectStatus = h.ExpectStatus
	if h.ExpectBody != "" {
		b := h.ExpectBody
		dc.ExpectBody = &b
	}
	dc.ExpectBodyContains = h.ExpectBodyContains
	if h.Timeout != nil {
		dc.Timeout = h.Timeout.D()
	}
	dc.Order, dc.Seed, dc.RetryUnsafe = h.Order, seed, h.RetryUnsafe
	dc.HTTP2, dc.H2C = h.HTTP2, h.H2C
	if t := h.TLS; t != nil {
		dc.TLS = &http.TLSConfig{Insecure: t.Insecure, CACert: t.CACert, Cert: t.Cert, Key: t.Key, ServerName: t.ServerName}
	}
	for _, r := range h.Requests {
		dc.Requests = append(dc.Requests, http.RequestSpec{Method: r.Method, URL: suite.Expand(r.URL, vars), Headers: r.Headers,
			Body: suite.Expand(r.Body, vars), Weight: r.Weight})
	}
	if h.RequestsFile != "" {
		reqs, err := http.LoadTargets(h.RequestsFile)
		if err != nil {
			return dc, err
		}
		dc.Requests = reqs
	}
	return dc, nil
}

// addressDriver builds an http path's driver: the URL carries the address
// (placeholders from vars); the path's own request is the probe. An
// https:// driver's TLS counters are its statistics, and what its
// connections negotiated is recorded.
func addressDriver(env system.Env, c suite.Cell, base system.Spec, vars map[string]string, _ string) (system.Spec, []system.Check, error) {
	h := env.Suite.Paths[c.Path].Spec.(*Path)
	dc, err := Config(h, vars, base.Engine.Seed)
	if err != nil {
		return base, nil, err
	}
	d, err := http.New(dc)
	if err != nil {
		return base, nil, err
	}
	pol := env.Suite.Policy()
	base.Driver, base.DriverConfig = d, system.JSON(recorded(dc, pol))
	probe := []system.Check{{Name: dc.Method + " " + pol.URL(dc.URL, nil), Run: d.Probe}}
	if d.Negotiated() != nil || dc.TLS != nil || strings.HasPrefix(dc.URL, "https://") {
		base.Stats, base.Judge = tlsStats{d}, recordNegotiated(d, dc)
	}
	return base, probe, nil
}

// tlsStats are an https:// driver's TLS counters as statistics
// (tls_handshakes, tls_resumed, tls_handshake_ms: load-window deltas, so
// the handshakes of reconnects are counted and timed apart from the
// requests).
type tlsStats struct{ d *http.Driver }

func (h tlsStats) Snapshot(context.Context) (map[string]float64, error) { return h.d.Stats(), nil }

// recordNegotiated records in a finished sample's driver configuration
// what its connections negotiated: the protocol, TLS version, cipher and
// ALPN (Config.Negotiated).
func recordNegotiated(d *http.Driver, dc http.Config) func(*result.Sample) {
	return func(s *result.Sample) {
		if s.Config == nil {
			return
		}
		dc.Negotiated = d.Negotiated()
		s.Config.Driver = system.JSON(dc.Redacted())
	}
}

// recorded is an HTTP driver's configuration as a sample records it:
// credentials hidden by the suite's policy (package secret): the URLs'
// userinfo and secret query parameters (the names kept), and the values of
// secret headers (Authorization, X-Upstream-Key, a secret_headers name).
func recorded(dc http.Config, p secret.Policy) http.Config {
	rec := dc.Redacted()
	rec.URL, rec.Headers = p.URL(rec.URL, nil), p.Headers(rec.Headers, nil)
	if len(rec.Requests) > 0 {
		reqs := make([]http.RequestSpec, len(rec.Requests))
		for i, r := range rec.Requests {
			r.URL, r.Headers = p.URL(r.URL, nil), p.Headers(r.Headers, nil)
			reqs[i] = r
		}
		rec.Requests = reqs
	}
	return rec
}
