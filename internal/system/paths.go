package system

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/benchrig/benchrig/internal/secret"
	"maps"
	"math"
	"strings"

	httpdrv "github.com/benchrig/benchrig/internal/driver/http"
	respdrv "github.com/benchrig/benchrig/internal/driver/resp"
	"github.com/benchrig/benchrig/internal/metrics"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/workload"
)

// The helpers below map a suite path onto its driver's configuration, the
// same way for every target kind that serves the protocol.

// HTTPConfig is the HTTP driver config of a suite path with placeholders
// filled; a requests_file is read (errors name file:line). seed seeds
// order: random.
func HTTPConfig(h *suite.HTTPPath, vars map[string]string, seed uint64) (httpdrv.Config, error) {
	dc := httpdrv.DefaultConfig()
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
		dc.TLS = &httpdrv.TLSConfig{Insecure: t.Insecure, CACert: t.CACert, Cert: t.Cert, Key: t.Key, ServerName: t.ServerName}
	}
	for _, r := range h.Requests {
		dc.Requests = append(dc.Requests, httpdrv.RequestSpec{Method: r.Method, URL: suite.Expand(r.URL, vars), Headers: r.Headers,
			Body: suite.Expand(r.Body, vars), Weight: r.Weight})
	}
	if h.RequestsFile != "" {
		reqs, err := httpdrv.LoadTargets(h.RequestsFile)
		if err != nil {
			return dc, err
		}
		dc.Requests = reqs
	}
	return dc, nil
}

// HTTPStats are an https:// driver's TLS counters as statistics
// (tls_handshakes, tls_resumed, tls_handshake_ms: load-window deltas, so
// the handshakes of reconnects are counted and timed apart from the
// requests).
func HTTPStats(d *httpdrv.Driver) StatsSource { return httpStats{d} }

type httpStats struct{ d *httpdrv.Driver }

func (h httpStats) Snapshot(context.Context) (map[string]float64, error) { return h.d.Stats(), nil }

// recordNegotiated records in a finished sample's driver configuration
// what its connections negotiated: the protocol, TLS version, cipher and
// ALPN (Config.Negotiated).
func recordNegotiated(d *httpdrv.Driver, dc httpdrv.Config) func(*result.Sample) {
	return func(s *result.Sample) {
		if s.Config == nil {
			return
		}
		dc.Negotiated = d.Negotiated()
		s.Config.Driver = JSON(dc.Redacted())
	}
}

// WorkloadConfig maps a suite workload and a cell's batch onto the workload
// package: writes: 5 (percent) is a mixed workload writing every 20th
// operation; writes: 100 is updates only.
func WorkloadConfig(w *suite.Workload, batch int, seed uint64) workload.Config {
	wc := workload.Config{Kind: workload.Hot, Batch: batch, Seed: seed}
	if w == nil {
		return wc
	}
	wc.Kind, wc.Rows, wc.Hot, wc.ZipfS = workload.Kind(w.Kind), w.Rows, w.Hot, w.ZipfS
	switch {
	case w.Writes >= 100:
		wc.Kind = workload.Writes
	case w.Writes > 0:
		wc.Kind = workload.Mixed
		wc.WriteEvery = int(math.Round(100 / w.Writes))
	}
	return wc
}

// RESPConfig is the RESP driver config of a suite path for cell c, without
// the address and authentication (the target kind adds them).
func RESPConfig(s *suite.Suite, p *suite.RESPPath, c suite.Cell, seed uint64) respdrv.Config {
	w := WorkloadConfig(s.Workloads[c.Workload], c.Batch, seed).WithDefaults()
	cfg := respdrv.DefaultConfig()
	cfg.Command, cfg.KeyTemplate, cfg.Value, cfg.Batch, cfg.DB = p.Command, p.Key, p.Value, c.Batch, p.DB
	if p.Command == "CUSTOM" {
		cfg.Command, cfg.Args = respdrv.CommandCustom, p.Args
	}
	if cfg.KeyTemplate == "" {
		cfg.KeyTemplate = respdrv.DefaultKeyTemplate
	}
	cfg.KeySpace = w.Hot
	if w.Kind != workload.Hot {
		cfg.KeySpace = w.Rows
	}
	if p.Timeout != nil {
		cfg.Timeout = p.Timeout.D()
	}
	cfg.ValidateSampled = p.ValidateSampled
	return cfg
}

// DatasetRows is the largest row count the cells' workloads use, or def
// when none names a workload.
func DatasetRows(s *suite.Suite, cells []suite.Cell, def int64) int64 {
	rows := int64(0)
	for _, c := range cells {
		if w := s.Workloads[c.Workload]; w != nil && w.Rows > rows {
			rows = w.Rows
		}
	}
	if rows == 0 {
		return def
	}
	return rows
}

// JSON encodes v for Spec.DriverConfig or SystemConfig; v is plain data, so
// an error is a programming error and yields null.
func JSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// RESPStats adds the RESP driver's own counters (hits, nils, validated and
// mismatched values: client_hits, …) to a target's statistics source, so
// that every sample of a RESP path records them as load-window deltas
// whatever serves the endpoint. inner may be nil.
func RESPStats(d *respdrv.Driver, inner StatsSource) StatsSource {
	return respStats{d: d, inner: inner}
}

type respStats struct {
	d     *respdrv.Driver
	inner StatsSource
}

func (r respStats) Snapshot(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	if r.inner != nil {
		m, err := r.inner.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, m)
	}
	st := r.d.Stats()
	out["client_hits"], out["client_nils"] = float64(st.Hits), float64(st.Nils)
	if r.d.Config().ValidateSampled > 0 {
		out["client_validated"], out["client_mismatches"] = float64(st.Validated), float64(st.Mismatches)
	}
	return out, nil
}

// JudgeRESP makes a sample UNHEALTHY when sampled values differed from the
// rows the target was filled with.
func JudgeRESP(s *result.Sample) {
	if n := s.Stats["client_mismatches"]; n > 0 {
		s.Verdict.Add("%.0f of %.0f sampled values differ from the rows filled", n, s.Stats["client_validated"])
	}
}

// MergeStats combines statistics sources into one (nil ones are skipped;
// nil when none is left). A name read by two sources is an error: the
// deltas must not overwrite each other silently.
func MergeStats(sources ...StatsSource) StatsSource {
	var ss mergedStats
	for _, s := range sources {
		if s != nil {
			ss = append(ss, s)
		}
	}
	switch len(ss) {
	case 0:
		return nil
	case 1:
		return ss[0]
	}
	return ss
}

type mergedStats []StatsSource

func (ms mergedStats) Snapshot(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	for _, s := range ms {
		m, err := s.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		for k, v := range m {
			if _, dup := out[k]; dup {
				return nil, fmt.Errorf("statistic %q is read twice (a statistics query column named like a built-in one? rename it with AS)", k)
			}
			out[k] = v
		}
	}
	return out, nil
}

// Judges runs several judges in order (nil ones skipped).
func Judges(js ...func(*result.Sample)) func(*result.Sample) {
	return func(s *result.Sample) {
		for _, j := range js {
			if j != nil {
				j(s)
			}
		}
	}
}

// AssertionVars are the values an assertion of a finished sample reads:
// the sample's counters (requests, sent, errors, timeouts, unexpected,
// keys = the batch, connections, pipeline, and scheduled, late, dropped
// at a rate, 0 in closed loop) and its statistics deltas. requests is
// what the server completed OK for the sample, as its statistics count
// it: the window's requests and those outstanding at its end that were
// answered OK in the drain after it (Load.OutstandingAnswered), so that
// "cache_hits == requests * keys" holds exactly.
func AssertionVars(s *result.Sample, c suite.Cell) map[string]float64 {
	v := make(map[string]float64, len(s.Stats)+len(suite.SampleCounters))
	for k, x := range s.Stats {
		v[k] = x
	}
	l := s.Load
	v["keys"], v["connections"], v["pipeline"] = float64(c.Batch), float64(c.Connections), float64(max(c.Pipeline, 1))
	if l != nil {
		v["requests"], v["sent"], v["errors"] = float64(l.Requests+l.OutstandingAnswered), float64(l.Sent), float64(l.Errors)
		v["timeouts"], v["unexpected"] = float64(l.Timeouts), float64(l.Unexpected)
		v["scheduled"], v["late"], v["dropped"] = 0, 0, 0
		if l.Rate != nil {
			v["scheduled"], v["late"], v["dropped"] = float64(l.Rate.Scheduled), float64(l.Rate.Late), float64(l.Rate.Dropped)
		}
	}
	return v
}

// DefaultMaxMiss fills th.MaxMiss when the suite left it unset: 0 (no
// read may miss) when the keys are known to hold values (filled: benchrig
// wrote them, or checked the table they are read from) or one of the
// cell's assertions reads a hit count ("cache_hits == requests * keys"),
// else it stays nil: misses are reported, and tolerated.
func DefaultMaxMiss(th *result.Thresholds, s *suite.Suite, c suite.Cell, filled bool) {
	if th.MaxMiss != nil {
		return
	}
	asserts := false
	for _, a := range s.Assertions(c) {
		asserts = asserts || strings.Contains(a.Expr.Source, "hits")
	}
	if filled || asserts {
		zero := 0.0
		th.MaxMiss = &zero
	}
}

// JudgeAssertions returns the judge of cell c's assertions (its target's
// and its path's): each comparison that does not hold makes the sample
// UNHEALTHY with the expression and both sides' values. nil when the cell
// has none.
func JudgeAssertions(s *suite.Suite, c suite.Cell) func(*result.Sample) {
	as := s.Assertions(c)
	if len(as) == 0 {
		return nil
	}
	return func(smp *result.Sample) {
		vars := AssertionVars(smp, c)
		for _, a := range as {
			rec := result.Assertion{Expr: a.Expr.Source, Holds: true}
			var values []string
			for _, f := range a.Expr.EvalAll(vars) {
				if v := f.Values(); v != "" {
					values = append(values, v)
				}
				if f.Holds {
					continue
				}
				rec.Holds = false
				if len(a.Expr.Terms) == 1 {
					smp.Verdict.Add("assertion %q failed: %s", a.Expr.Source, f.Values())
				} else {
					smp.Verdict.Add("assertion %q failed at %s", a.Expr.Source, f)
				}
			}
			rec.Values = strings.Join(values, "; ")
			smp.Assertions = append(smp.Assertions, rec)
		}
	}
}

// recordedHTTP is an HTTP driver's configuration as a sample records it:
// credentials hidden by the suite's policy (package secret): the URLs'
// userinfo and secret query parameters (the names kept), and the values of
// secret headers (Authorization, X-Upstream-Key, a secret_headers name).
func recordedHTTP(dc httpdrv.Config, p secret.Policy) httpdrv.Config {
	rec := dc.Redacted()
	rec.URL, rec.Headers = p.URL(rec.URL, nil), p.Headers(rec.Headers, nil)
	if len(rec.Requests) > 0 {
		reqs := make([]httpdrv.RequestSpec, len(rec.Requests))
		for i, r := range rec.Requests {
			r.URL, r.Headers = p.URL(r.URL, nil), p.Headers(r.Headers, nil)
			reqs[i] = r
		}
		rec.Requests = reqs
	}
	return rec
}

// AddressDriver gives base the driver of cell c's http or resp path on a
// server reached at an address (host:port for resp; http paths carry their
// URL, placeholders from vars): the driver, its recorded configuration, the
// RESP client statistics, and the checks — the target's own (list), or else
// the path's request itself — before and after the load. Command, attach
// and address targets share it.
func AddressDriver(env Env, c suite.Cell, base Spec, vars map[string]string, respAddr string, list []Check) (Spec, error) {
	p := env.Suite.Paths[c.Path]
	var probe []Check // the path's own request, checked when the target lists no checks
	switch {
	case p.HTTP != nil:
		dc, err := HTTPConfig(p.HTTP, vars, base.Engine.Seed)
		if err != nil {
			return base, fmt.Errorf("path %q: %w", c.Path, err)
		}
		d, err := httpdrv.New(dc)
		if err != nil {
			return base, fmt.Errorf("path %q: %w", c.Path, err)
		}
		base.Driver, base.DriverConfig = d, JSON(recordedHTTP(dc, env.Suite.Policy()))
		probe = []Check{{Name: dc.Method + " " + env.Suite.Policy().URL(dc.URL, nil), Run: d.Probe}}
		if d.Negotiated() != nil || dc.TLS != nil || strings.HasPrefix(dc.URL, "https://") {
			base.Stats, base.Judge = HTTPStats(d), recordNegotiated(d, dc)
		}
	case p.RESP != nil:
		rc := RESPConfig(env.Suite, p.RESP, c, base.Engine.Seed)
		rc.Addr = respAddr
		d, err := respdrv.New(rc)
		if err != nil {
			return base, fmt.Errorf("path %q: %w", c.Path, err)
		}
		base.Driver, base.DriverConfig = d, JSON(d.Config())
		base.Stats, base.Judge = RESPStats(d, nil), JudgeRESP
	default:
		return base, Unsupported(env, c)
	}
	base.PreChecks = list
	if len(list) == 0 {
		base.PreChecks = probe
	}
	base.PostChecks = base.PreChecks
	if m := env.Target.Metrics; m != nil {
		base.Metrics = &metrics.Config{URL: suite.Expand(m.URL, vars), Every: m.Every.D(), Series: m.Series}
	}
	base.Remote = &Remote{Vars: vars, RESPAddr: respAddr}
	return base, nil
}
