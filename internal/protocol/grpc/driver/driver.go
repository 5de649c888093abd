// Package grpc is benchrig's gRPC client: calls of one method (unary,
// server-, client- or bidirectional streaming) described by .proto files
// or the server's reflection, on benchrig's own HTTP/2 connections and
// event loops (package http's driver carries the calls as an Exchange):
// the request messages are built once per template and patched per key,
// the 5-byte message prefix written with them, and each call judged by
// its grpc-status, its framing and, when asked, its response message or
// its count of messages. grpc-go's client is never on the load path.
package grpc

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/protocol/grpc/message"
	grpcreflect "github.com/benchrig/benchrig/internal/protocol/grpc/reflect"
	http "github.com/benchrig/benchrig/internal/protocol/http/driver"
	"github.com/benchrig/benchrig/internal/workload"
)

// Driver makes gRPC calls of one method. The HTTP/2 driver it embeds opens the
// connections (its event loops, its goroutine connections at a constant
// rate) and keeps their statistics (TLS handshakes, what was negotiated).
type Driver struct {
	*http.Driver
	cfg    Config
	method *message.Method
	x      *exchange
	sx     *streamExchange // a server-streaming or bidirectional method's
}

var _ driver.Driver = (*Driver)(nil)

// New reads the .proto files (or asks the server's reflection service),
// finds the method, compiles the request message and the expected
// response, and prepares the calls' headers.
func New(cfg Config) (*Driver, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	var set *message.Set
	var err error
	switch {
	case cfg.Reflection:
		set, err = reflected(&cfg)
	case len(cfg.Proto) == 0:
		return nil, fmt.Errorf("proto: required, the .proto files that describe %s (or reflection, to ask the server)", cfg.Call)
	default:
		set, err = message.Load(cfg.Proto, cfg.ImportPaths)
	}
	if err != nil {
		return nil, err
	}
	return NewWithSet(cfg, set)
}

// reflected asks the server's reflection service for the method's
// descriptors, over the connection the calls will use (h2c or TLS).
func reflected(cfg *Config) (*message.Set, error) {
	o := grpcreflect.Options{Addr: cfg.Addr, Authority: cfg.Authority, Metadata: cfg.Metadata,
		Timeout: cmp.Or(cfg.DialTimeout, 5*time.Second) + 5*time.Second}
	if cfg.TLS != nil {
		host, _, err := net.SplitHostPort(cfg.Addr)
		if err != nil {
			return nil, fmt.Errorf("addr %q: want host:port: %v", cfg.Addr, err)
		}
		if o.TLS, err = http.ClientTLS(cfg.TLS, host); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	return grpcreflect.Resolve(ctx, cfg.Call, o)
}

// NewWithSet is New with the method's descriptors already at hand (a
// built-in service, or a server's reflection); cfg.Proto is then only
// recorded.
func NewWithSet(cfg Config, set *message.Set) (*Driver, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	m, err := set.Method(cfg.Call)
	if err != nil {
		return nil, err
	}
	x, err := newExchange(&cfg, m)
	if err != nil {
		return nil, err
	}
	var hx http.Exchange = x
	var sx *streamExchange
	if m.ServerStreaming() {
		if cfg.ExpectJSON != "" || cfg.ExpectContains != "" {
			return nil, fmt.Errorf("expect json_equal and message_contains check a unary answer; %s answers a stream: expect messages counts it", m.Name)
		}
		sx = &streamExchange{exchange: x, wantMessages: int64(cfg.ExpectMessages)}
		hx = sx
	} else if cfg.ExpectMessages > 0 {
		return nil, fmt.Errorf("expect messages counts a stream of answers; %s answers one message", m.Name)
	}
	if cfg.StreamMessages > 1 && !m.ClientStreaming() {
		return nil, fmt.Errorf("stream_messages %d: %s takes one request message; accepted: 1, or a client-streaming or bidirectional method", cfg.StreamMessages, m.Name)
	}
	hc, err := httpConfig(&cfg, m)
	if err != nil {
		return nil, err
	}
	hd, err := http.NewExchange(hc, hx)
	if err != nil {
		return nil, err
	}
	cfg.RequestBytes = len(x.AppendBody(nil, 0))
	return &Driver{Driver: hd, cfg: cfg, method: m, x: x, sx: sx}, nil
}

// httpConfig is the HTTP/2 request every call sends: POST to the
// method's path with gRPC's headers and the metadata.
func httpConfig(cfg *Config, m *message.Method) (http.Config, error) {
	hc := http.DefaultConfig()
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return hc, fmt.Errorf("addr %q: want host:port: %v", cfg.Addr, err)
	}
	scheme := "h2c"
	if cfg.TLS != nil {
		scheme, hc.HTTP2, hc.TLS = "https", true, cfg.TLS
	}
	hc.URL = scheme + "://" + cfg.Addr + m.Path
	hc.Method = "POST"
	hc.Timeout, hc.DialTimeout = cfg.Timeout, cmp.Or(cfg.DialTimeout, hc.DialTimeout)
	hc.Headers = map[string]string{"content-type": "application/grpc", "te": "trailers", "user-agent": "benchrig"}
	if cfg.Deadline > 0 {
		t, err := message.Timeout(cfg.Deadline)
		if err != nil {
			return hc, fmt.Errorf("deadline: %w", err)
		}
		hc.Headers["grpc-timeout"] = t
	}
	if cfg.Authority != "" {
		hc.Headers["host"] = cfg.Authority
	}
	if cfg.Compression == "gzip" {
		hc.Headers["grpc-encoding"], hc.Headers["grpc-accept-encoding"] = "gzip", "gzip"
	}
	for k, v := range cfg.Metadata {
		hc.Headers[strings.ToLower(k)] = v
	}
	return hc, nil
}

// Name implements driver.Driver.
func (d *Driver) Name() string { return "grpc" }

// Ops implements driver.Driver: one kind of operation, the call.
func (d *Driver) Ops() []string { return []string{"call"} }

// Config returns the driver's configuration.
func (d *Driver) Config() Config { return d.cfg }

// Stats implements the driver's statistics: the connections' TLS
// counters and, for a method that answers a stream, its calls, messages
// and time to first message (grpc_*), cumulative.
func (d *Driver) Stats() map[string]float64 {
	m := d.Driver.Stats()
	if d.sx == nil {
		return m
	}
	if m == nil {
		m = map[string]float64{}
	}
	d.sx.stats(m)
	return m
}

// Method returns the method called.
func (d *Driver) Method() *message.Method { return d.method }

// Probe makes one call on a fresh connection: a server that does not
// serve the method (UNIMPLEMENTED), or answers another status than the
// expected one, is refused before the load.
func (d *Driver) Probe(ctx context.Context) error {
	if err := d.Driver.Probe(ctx); err != nil {
		return fmt.Errorf("gRPC %s: %w", d.method.Name, err)
	}
	return nil
}

// newExchange prepares the request messages and the judging of responses.
func newExchange(cfg *Config, m *message.Method) (*exchange, error) {
	x := &exchange{deadline: cfg.Deadline, perCall: max(1, cfg.StreamMessages), gzip: cfg.Compression == "gzip"}
	in := m.Desc.Input()
	if cfg.DataFile != "" {
		msgs, err := message.ReadMessages(cfg.DataFile, in, MaxMessages)
		if err != nil {
			return nil, fmt.Errorf("data_file: %w", err)
		}
		if x.gzip {
			for i, m := range msgs {
				msgs[i] = message.Gzip(nil, m, true)
			}
		}
		x.msgs = msgs
	} else {
		t, err := message.NewTemplate(in, cmp.Or(cfg.Data, "{}"))
		if err != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
		if t.Keyed() {
			w, err := workload.New(cfg.Workload)
			if err != nil {
				return nil, fmt.Errorf("workload: %w", err)
			}
			if err := t.Check(w.Rows()); err != nil {
				return nil, fmt.Errorf("data: %w", err)
			}
			x.tmpl, x.wl = t, w
		} else {
			one := t.Append(nil, 0)
			if x.gzip {
				one = message.Gzip(nil, one, true)
			}
			for range x.perCall {
				x.fixed = append(x.fixed, one...)
			}
		}
	}
	if cfg.ExpectStatus != "" {
		x.want, _ = message.ParseCode(cfg.ExpectStatus)
	}
	x.wantName, _ = message.CodeName(fmt.Sprint(x.want))
	if cfg.ExpectJSON != "" || cfg.ExpectContains != "" {
		e, err := message.NewExpect(m, cfg.ExpectJSON, cfg.ExpectContains)
		if err != nil {
			return nil, fmt.Errorf("expect: %w", err)
		}
		x.expect = e
	}
	return x, nil
}
