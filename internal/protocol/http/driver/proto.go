package http

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// Protocol names, as ALPN spells them and results record them.
const (
	ProtoHTTP1 = "http/1.1"
	ProtoH2    = "h2"
	ProtoH2C   = "h2c"
)

// wire is how a driver reaches its server: TLS or not, HTTP/1.1 or
// HTTP/2, decided from the URL's scheme and the Config (setup), and for
// an https:// URL without Config.HTTP2 from what the server offers
// (resolve, once, before the first connection).
type wire struct {
	tls  *tlsState // nil: cleartext
	h2   bool      // HTTP/2 (over TLS with ALPN h2, or h2c with prior knowledge)
	auto bool      // https without HTTP2: ask the server (resolve)
	mu   sync.Mutex
}

// setupWire decides the wire from the scheme and the config.
func (d *Driver) setupWire() error {
	c, t := &d.cfg, d.t
	switch t.scheme {
	case "https":
		if c.H2C {
			return fmt.Errorf("h2c is cleartext HTTP/2: it takes an http:// or h2c:// URL, not https:// (over TLS use --http2)")
		}
		tc := c.TLS
		if tc == nil {
			tc = &TLSConfig{}
		}
		cfg, err := buildTLS(tc, t.host)
		if err != nil {
			return err
		}
		d.w.tls = &tlsState{cfg: cfg}
		d.w.h2, d.w.auto = c.HTTP2, !c.HTTP2
	case "h2c":
		if c.HTTP2 {
			return fmt.Errorf("http2 is HTTP/2 over TLS: it takes an https:// URL (an h2c:// URL is already HTTP/2, cleartext)")
		}
		d.w.h2 = true
	default:
		if c.HTTP2 {
			return fmt.Errorf("http2 is HTTP/2 over TLS (ALPN): it takes an https:// URL; cleartext HTTP/2 is h2c:// (or h2c)")
		}
		d.w.h2 = c.H2C
	}
	if c.TLS != nil && d.w.tls == nil {
		return fmt.Errorf("TLS options (insecure, cacert, cert, key, servername) given for a cleartext %s:// URL: use https://", t.scheme)
	}
	return nil
}

// resolve settles an https:// driver's protocol without Config.HTTP2: it
// speaks HTTP/2 only when the server offers nothing else, as h2load and
// curl find out. Offered http/1.1 alone, such a server either refuses the
// handshake (no_application_protocol) or, as Go's servers do, accepts it
// without choosing a protocol; offered h2 alone it chooses h2. A server
// that chooses http/1.1, or no protocol either way, is spoken to in
// HTTP/1.1. The probing handshakes are closed at once and not counted.
func (d *Driver) resolve(ctx context.Context) error {
	d.w.mu.Lock()
	defer d.w.mu.Unlock()
	if !d.w.auto {
		return nil
	}
	alpn, err := d.probeALPN(ctx, []string{ProtoHTTP1})
	switch {
	case err != nil && !noALPN(err):
		return err
	case err == nil && alpn != "":
		// the server chose (http/1.1): HTTP/1.1
	default:
		if a, err2 := d.probeALPN(ctx, []string{ProtoH2}); err2 == nil && a == ProtoH2 {
			d.w.h2 = true
		} else if err != nil {
			return fmt.Errorf("the server refused ALPN http/1.1 and h2: %w", err)
		}
	}
	d.w.auto = false
	return nil
}

// probeALPN makes one TLS handshake offering protos and returns the
// protocol the server chose.
func (d *Driver) probeALPN(ctx context.Context, protos []string) (string, error) {
	nc, err := d.dialTCP(ctx)
	if err != nil {
		return "", err
	}
	cfg := d.w.tls.cfg.Clone()
	cfg.NextProtos = protos
	tc := tls.Client(nc, cfg)
	hctx, cancel := context.WithTimeout(ctx, d.dialTimeout())
	defer cancel()
	err = tc.HandshakeContext(hctx)
	defer tc.Close()
	if err != nil {
		if noALPN(err) {
			return "", err
		}
		return "", handshakeError(err, cfg.ServerName)
	}
	return tc.ConnectionState().NegotiatedProtocol, nil
}

// noALPN reports a server's no_application_protocol alert.
func noALPN(err error) bool {
	var a tls.AlertError
	return errors.As(err, &a) && a == 120 || strings.Contains(err.Error(), "no application protocol")
}

// dialTimeout is the connect (and handshake) bound.
func (d *Driver) dialTimeout() time.Duration {
	if d.cfg.DialTimeout > 0 {
		return d.cfg.DialTimeout
	}
	return 5 * time.Second
}

// dialTCP opens the TCP connection.
func (d *Driver) dialTCP(ctx context.Context) (net.Conn, error) {
	return (&net.Dialer{Timeout: d.dialTimeout()}).DialContext(ctx, "tcp", d.t.addr)
}

// Negotiated returns what the driver's connections settled (nil for
// plain HTTP/1.1 over TCP): the protocol, and the last TLS handshake's
// version, cipher and ALPN with the handshake counts.
func (d *Driver) Negotiated() *Negotiated {
	proto := ProtoHTTP1
	if d.w.h2 {
		proto = ProtoH2
	}
	if d.w.tls == nil {
		if !d.w.h2 {
			return nil
		}
		return &Negotiated{Protocol: ProtoH2C}
	}
	return d.w.tls.negotiated(proto)
}

// Stats are the driver's cumulative TLS counters, for a sample's
// statistics (load-window deltas): handshakes, resumed handshakes and the
// milliseconds spent in handshakes (reconnects' cost, kept apart from the
// requests' latency). nil without TLS.
func (d *Driver) Stats() map[string]float64 {
	s := d.w.tls
	if s == nil {
		return nil
	}
	return map[string]float64{
		"tls_handshakes":   float64(s.handshakes.Load()),
		"tls_resumed":      float64(s.resumed.Load()),
		"tls_handshake_ms": float64(s.handshakeNS.Load()) / 1e6,
	}
}
