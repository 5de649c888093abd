package grpcephemeral

import (
	"crypto/tls"
	"fmt"

	"github.com/benchrig/benchrig/internal/resp/resptest"
)

// selfSigned makes a self-signed ECDSA P-256 certificate for 127.0.0.1,
// ::1 and localhost, valid from an hour ago for a day (the tests'
// generator, resptest.GenerateCert). It is its own CA (clients trust it
// as a root) and its key never leaves the process. It returns the
// certificate as PEM and the TLS configuration that serves it, ALPN "h2".
func selfSigned() ([]byte, *tls.Config, error) {
	certPEM, keyPEM, err := resptest.GenerateCert()
	if err != nil {
		return nil, nil, fmt.Errorf("grpcephemeral: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("grpcephemeral: TLS key pair: %w", err)
	}
	return certPEM, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2"}}, nil
}
