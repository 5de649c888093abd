package http

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/resp/resptest"
)

// testCert is a self-signed certificate made by a test, for 127.0.0.1 and
// localhost, written as PEM files (the certificate is its own CA).
type testCert struct {
	CertFile, KeyFile string
	TLS               tls.Certificate
	Pool              *x509.CertPool
}

// makeCert makes a self-signed certificate valid from notBefore to
// notAfter (an expired one: both in the past).
func makeCert(t *testing.T, name string, notBefore, notAfter time.Time) testCert {
	t.Helper()
	cp, kp, err := resptest.GenerateCertBetween(notBefore, notAfter)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := testCert{CertFile: filepath.Join(dir, name+".pem"), KeyFile: filepath.Join(dir, name+".key")}
	if err := os.WriteFile(c.CertFile, cp, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.KeyFile, kp, 0o600); err != nil {
		t.Fatal(err)
	}
	if c.TLS, err = tls.X509KeyPair(cp, kp); err != nil {
		t.Fatal(err)
	}
	c.Pool = x509.NewCertPool()
	c.Pool.AppendCertsFromPEM(cp)
	return c
}

// validCert is a certificate valid for the test's duration.
func validCert(t *testing.T, name string) testCert {
	return makeCert(t, name, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
}
