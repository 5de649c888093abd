// Package resp is the RESP (Redis protocol) protocol of benchrig: its suite
// section (paths.NAME.resp), how a path becomes a driver, the driver's own
// statistics and judge, and its registration with the suite and the
// systems. The client is in the driver subpackage; the codec, shared with
// the servers, is package internal/resp.
package resp

import (
	"context"
	"maps"

	"github.com/benchrig/benchrig/internal/protocol/resp/driver"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/workload"
)

// Key is the protocol's name in suites and results.
const Key suite.Protocol = "resp"

// ClientStatNames are the RESP driver's own counters every resp sample
// records, whatever serves the endpoint.
var ClientStatNames = []string{"client_hits", "client_nils", "client_validated", "client_mismatches"}

func init() {
	suite.RegisterProtocol(suite.ProtocolInfo{Key: Key, NewPath: func() suite.PathSpec { return new(Path) },
		Generic: true, Keyed: true, ClientStats: ClientStatNames})
	suite.RegisterKind(suite.KindRedis, Key, true)
	suite.RegisterKind(suite.KindPostgres, Key, false) // through its RESP endpoint
	system.RegisterAddress(Key, addressDriver)
}

// PathOf returns the RESP section of a cell's path (nil when it is not a
// resp path).
func PathOf(s *suite.Suite, c suite.Cell) *Path {
	if p := s.Paths[c.Path]; p != nil {
		r, _ := p.Spec.(*Path)
		return r
	}
	return nil
}

// Config is the RESP driver config of a suite path for cell c, without
// the address and authentication (the target kind adds them).
func Config(s *suite.Suite, p *Path, c suite.Cell, seed uint64) resp.Config {
	w := system.WorkloadConfig(s.Workloads[c.Workload], c.Batch, seed).WithDefaults()
	cfg := resp.DefaultConfig()
	cfg.Command, cfg.KeyTemplate, cfg.Value, cfg.Batch, cfg.DB = p.Command, p.Key, p.Value, c.Batch, p.DB
	if p.Command == "CUSTOM" {
		cfg.Command, cfg.Args = resp.CommandCustom, p.Args
	}
	if cfg.KeyTemplate == "" {
		cfg.KeyTemplate = resp.DefaultKeyTemplate
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

// Stats adds the RESP driver's own counters (hits, nils, validated and
// mismatched values: client_hits, …) to a target's statistics source, so
// that every sample of a RESP path records them as load-window deltas
// whatever serves the endpoint. inner may be nil.
func Stats(d *resp.Driver, inner system.StatsSource) system.StatsSource {
	return stats{d: d, inner: inner}
}

type stats struct {
	d     *resp.Driver
	inner system.StatsSource
}

func (r stats) Snapshot(ctx context.Context) (map[string]float64, error) {
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

// Judge makes a sample UNHEALTHY when sampled values differed from the
// rows the target was filled with.
func Judge(s *result.Sample) {
	if n := s.Stats["client_mismatches"]; n > 0 {
		s.Verdict.Add("%.0f of %.0f sampled values differ from the rows filled", n, s.Stats["client_validated"])
	}
}

// addressDriver builds a resp path's driver for a server at addr.
func addressDriver(env system.Env, c suite.Cell, base system.Spec, _ map[string]string, addr string) (system.Spec, []system.Check, error) {
	rc := Config(env.Suite, PathOf(env.Suite, c), c, base.Engine.Seed)
	rc.Addr = addr
	d, err := resp.New(rc)
	if err != nil {
		return base, nil, err
	}
	base.Driver, base.DriverConfig = d, system.JSON(d.Config())
	base.Stats, base.Judge = Stats(d, nil), Judge
	return base, nil, nil
}
