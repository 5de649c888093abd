// Package grpc is the gRPC protocol of benchrig: its suite section
// (paths.NAME.grpc), how a path becomes a driver on a server reached at
// an address, and its registration with the suite and the systems. The
// client is in the driver subpackage, the messages (.proto files,
// templates, framing) in message.
package grpc

import (
	"context"
	"fmt"

	grpc "github.com/benchrig/benchrig/internal/protocol/grpc/driver"
	http "github.com/benchrig/benchrig/internal/protocol/http/driver"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
)

// Key is the protocol's name in suites and results.
const Key suite.Protocol = "grpc"

func init() {
	suite.RegisterProtocol(suite.ProtocolInfo{Key: Key, NewPath: func() suite.PathSpec { return new(Path) },
		Generic: true, Keyed: true})
	system.RegisterAddress(Key, addressDriver)
}

// Config is the gRPC driver config of a suite path for cell c on the
// server at addr.
func Config(s *suite.Suite, g *Path, c suite.Cell, addr string, seed uint64) (grpc.Config, error) {
	dc := grpc.DefaultConfig()
	dc.Addr, dc.Authority, dc.Call = addr, g.Authority, g.Call
	dc.Proto, dc.ImportPaths, dc.Reflection, dc.Compression = g.Proto, g.ImportPaths, g.Reflection, g.Compression
	dc.Data, dc.DataFile, dc.Metadata, dc.StreamMessages = g.Data, g.DataFile, g.Metadata, g.StreamMessages
	if g.Deadline != nil {
		dc.Deadline = g.Deadline.D()
	}
	if g.Timeout != nil {
		dc.Timeout = g.Timeout.D()
	}
	if t := g.TLS; t != nil {
		dc.TLS = &http.TLSConfig{Insecure: t.Insecure, CACert: t.CACert, Cert: t.Cert, Key: t.Key, ServerName: t.ServerName}
	}
	if e := g.Expect; e != nil {
		j, err := e.jsonText()
		if err != nil {
			return dc, fmt.Errorf("expect.json_equal: %w", err)
		}
		dc.ExpectStatus, dc.ExpectContains, dc.ExpectJSON, dc.ExpectMessages = e.Status, e.MessageContains, j, e.Messages
	}
	dc.Workload = system.WorkloadConfig(s.Workloads[c.Workload], 1, seed).WithDefaults()
	return dc, nil
}

// addressDriver builds a grpc path's driver for the server at addr; its
// first call is the pre-flight.
func addressDriver(env system.Env, c suite.Cell, base system.Spec, _ map[string]string, addr string) (system.Spec, []system.Check, error) {
	g := env.Suite.Paths[c.Path].Spec.(*Path)
	dc, err := Config(env.Suite, g, c, addr, base.Engine.Seed)
	if err != nil {
		return base, nil, err
	}
	d, err := grpc.New(dc)
	if err != nil {
		return base, nil, fmt.Errorf("path %s: %w", c.Path, err)
	}
	pol := env.Suite.Policy()
	base.Driver, base.DriverConfig = d, system.JSON(recorded(dc, pol))
	base.Stats, base.Judge = tlsStats{d}, judge(d, dc, pol)
	return base, []system.Check{{Name: "gRPC " + d.Method().Name, Run: d.Probe}}, nil
}

// tlsStats are a driver's TLS counters as statistics (tls_handshakes,
// tls_resumed, tls_handshake_ms), as for HTTP; none over h2c.
type tlsStats struct{ d *grpc.Driver }

func (s tlsStats) Snapshot(context.Context) (map[string]float64, error) { return s.d.Stats(), nil }

// judge records in a finished sample's driver configuration what its
// connections negotiated (protocol, TLS version, cipher, ALPN), and, for
// a method answering a stream, the means its counters give: messages
// per call and the time to the first message.
func judge(d *grpc.Driver, dc grpc.Config, p secret.Policy) func(*result.Sample) {
	return func(s *result.Sample) {
		if calls := s.Stats["grpc_calls"]; calls > 0 {
			s.Stats["grpc_messages_per_call"] = s.Stats["grpc_messages_received"] / calls
			if n := s.Stats["grpc_calls_with_messages"]; n > 0 {
				s.Stats["grpc_first_message_ms_mean"] = s.Stats["grpc_first_message_ms_total"] / n
			}
		}
		if s.Config == nil {
			return
		}
		dc.Negotiated = d.Negotiated()
		s.Config.Driver = system.JSON(recorded(dc, p))
	}
}

// recorded is a driver's configuration as a sample records it: secret
// metadata hidden by the suite's policy.
func recorded(dc grpc.Config, p secret.Policy) grpc.Config {
	rec := dc.Redacted()
	rec.Metadata = p.Headers(rec.Metadata, nil)
	return rec
}
