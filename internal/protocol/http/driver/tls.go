package http

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// TLSConfig is how https:// connections are made. Plain data, recorded in
// results files (file names only, never their contents).
type TLSConfig struct {
	// Insecure skips the verification of the server's certificate chain
	// and name (curl's -k).
	Insecure bool `json:"insecure,omitempty"`
	// CACert is a PEM file of the certificate authorities to trust instead
	// of the system's.
	CACert string `json:"cacert,omitempty"`
	// Cert and Key are a PEM client certificate and its private key, sent
	// when the server asks for one. Both or neither.
	Cert string `json:"cert,omitempty"`
	Key  string `json:"key,omitempty"`
	// ServerName is the name sent in SNI and verified in the certificate;
	// empty: the URL's host.
	ServerName string `json:"server_name,omitempty"`
}

// Negotiated is what the TLS handshakes (or the h2c preface) of a
// driver's connections settled, recorded per sample beside the config.
type Negotiated struct {
	// Protocol is the HTTP version spoken: "http/1.1" or "h2" (h2c for
	// cleartext HTTP/2).
	Protocol string `json:"protocol"`
	// TLSVersion ("TLS 1.3"), Cipher ("TLS_AES_128_GCM_SHA256") and ALPN
	// ("h2", "" when the server chose none): the last handshake's.
	TLSVersion string `json:"tls_version,omitempty"`
	Cipher     string `json:"cipher,omitempty"`
	ALPN       string `json:"alpn,omitempty"`
	// Handshakes counts full and resumed TLS handshakes, from the driver's
	// start; Resumed those that resumed a session (a ticket from an earlier
	// connection: reconnects are cheap).
	Handshakes int64 `json:"handshakes,omitempty"`
	Resumed    int64 `json:"resumed,omitempty"`
}

// tlsState is the driver's TLS setup and what its handshakes found.
type tlsState struct {
	cfg *tls.Config // the client config; NextProtos set per mode
	mu  sync.Mutex
	// last is the last handshake's state.
	last       tls.ConnectionState
	handshakes atomic.Int64
	resumed    atomic.Int64
	// handshakeNS sums the time spent in handshakes (reconnects' cost).
	handshakeNS atomic.Int64
}

// buildTLS turns a TLSConfig into a crypto/tls client config: TLS 1.2 or
// 1.3, a session cache shared by every connection of the driver (so a
// reconnect resumes), the trust and client certificate given. host is the
// URL's host, the SNI name unless ServerName says otherwise. Errors name
// the file.
// ClientTLS is the crypto/tls configuration c makes for a server named
// host (trust, client certificate, SNI), as the driver's connections
// use it: for a protocol's set-up exchanges beside the load (gRPC's
// reflection).
func ClientTLS(c *TLSConfig, host string) (*tls.Config, error) { return buildTLS(c, host) }

func buildTLS(c *TLSConfig, host string) (*tls.Config, error) {
	tc := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         host,
		InsecureSkipVerify: c.Insecure,
		ClientSessionCache: tls.NewLRUClientSessionCache(4096),
	}
	if c.ServerName != "" {
		tc.ServerName = c.ServerName
	}
	if c.CACert != "" {
		pem, err := readBounded(c.CACert, maxPEM)
		if err != nil {
			return nil, fmt.Errorf("cacert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("cacert %s: no PEM certificate in it", c.CACert)
		}
		tc.RootCAs = pool
	}
	switch {
	case c.Cert != "" && c.Key != "":
		cb, err := readBounded(c.Cert, maxPEM)
		if err != nil {
			return nil, fmt.Errorf("cert: %w", err)
		}
		kb, err := readBounded(c.Key, maxPEM)
		if err != nil {
			return nil, fmt.Errorf("key: %w", err)
		}
		pair, err := tls.X509KeyPair(cb, kb)
		if err != nil {
			return nil, fmt.Errorf("cert %s and key %s: %w", c.Cert, c.Key, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	case c.Cert != "":
		return nil, fmt.Errorf("cert %s given without its key: give both", c.Cert)
	case c.Key != "":
		return nil, fmt.Errorf("key %s given without its certificate: give both", c.Key)
	}
	return tc, nil
}

// maxPEM bounds a certificate or key file.
const maxPEM = 1 << 20

// readBounded reads a file of at most max bytes.
func readBounded(name string, max int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: over %d KiB; a PEM certificate or key is a few KiB", name, max>>10)
	}
	return b, nil
}

// handshake wraps nc in TLS offering the ALPN protocols protos and runs
// the handshake within the dial timeout. A certificate error says what
// to do about it.
func (s *tlsState) handshake(ctx context.Context, nc net.Conn, protos []string, timeout time.Duration) (*tls.Conn, error) {
	cfg := s.cfg.Clone()
	cfg.NextProtos = protos
	tc := tls.Client(nc, cfg)
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t0 := time.Now()
	if err := tc.HandshakeContext(hctx); err != nil {
		_ = nc.Close()
		return nil, handshakeError(err, cfg.ServerName)
	}
	s.record(tc.ConnectionState(), time.Since(t0))
	return tc, nil
}

// handshakeError explains a failed handshake: a certificate the client
// does not trust names the remedies.
func handshakeError(err error, name string) error {
	var (
		ve *tls.CertificateVerificationError
		ue x509.UnknownAuthorityError
		he x509.HostnameError
		ie x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &ie) && ie.Reason == x509.Expired:
		return fmt.Errorf("TLS handshake: the server's certificate has expired or is not yet valid (%v); renew it, or --insecure to skip verification", ie)
	case errors.As(err, &he):
		return fmt.Errorf("TLS handshake: the server's certificate is not for %q (%v); --servername NAME sets the name checked, --insecure skips verification", name, he)
	case errors.As(err, &ue):
		return fmt.Errorf("TLS handshake: the server's certificate is signed by an unknown authority; --cacert FILE trusts its CA, --insecure skips verification")
	case errors.As(err, &ve):
		return fmt.Errorf("TLS handshake: the server's certificate failed verification (%v); --cacert FILE or --insecure", ve.Err)
	}
	return fmt.Errorf("TLS handshake: %w", err)
}

// negotiated returns the recorded form of the last handshake.
func (s *tlsState) negotiated(protocol string) *Negotiated {
	s.mu.Lock()
	st := s.last
	s.mu.Unlock()
	n := &Negotiated{Protocol: protocol, Handshakes: s.handshakes.Load(), Resumed: s.resumed.Load()}
	if st.Version != 0 {
		n.TLSVersion = tls.VersionName(st.Version)
		n.Cipher = tls.CipherSuiteName(st.CipherSuite)
		n.ALPN = st.NegotiatedProtocol
	}
	return n
}

// record counts one handshake: its state, and its time apart from any
// request's.
func (s *tlsState) record(st tls.ConnectionState, d time.Duration) {
	s.handshakeNS.Add(int64(d))
	s.handshakes.Add(1)
	if st.DidResume {
		s.resumed.Add(1)
	}
	s.mu.Lock()
	s.last = st
	s.mu.Unlock()
}
