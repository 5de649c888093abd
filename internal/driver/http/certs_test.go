package http

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
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
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost", name},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := testCert{CertFile: filepath.Join(dir, name+".pem"), KeyFile: filepath.Join(dir, name+".key")}
	cp := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	kp := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
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
