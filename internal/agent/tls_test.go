package agent

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/suite"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, PEM.
func selfSigned(t *testing.T, dir, name string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	_ = os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}

// TestTLS: with TLS the run works as without; an agent that does not trust
// the coordinator's certificate, or speaks no TLS, does not join.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir, "coordinator")
	other, _ := selfSigned(t, dir, "other")
	stls, err := ServerTLS(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	srv := newCountingServer(t)
	const n = 300
	s, err := suite.Parse("test", []byte(indexedSuite(srv.URL, n, "", 4)))
	if err != nil {
		t.Fatal(err)
	}
	coord, err := NewCoordinator(CoordinatorConfig{Agents: 2, Token: testToken, Timings: patient(t), TLS: stls, JoinFor: patient(t).AgentTimeout + time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := coord.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer coord.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// not trusted, and plain TCP: both fail to join.
	untrusted, err := ClientTLS(other, coord.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(ctx, Config{Coordinator: coord.Addr(), Index: 0, Token: testToken, Timings: patient(t), TLS: untrusted, DialFor: 2 * time.Second}); err == nil {
		t.Error("an agent that does not trust the certificate joined")
	}
	if err := Run(ctx, Config{Coordinator: coord.Addr(), Index: 0, Token: testToken, Timings: patient(t), DialFor: 2 * time.Second}); err == nil {
		t.Error("a plain-TCP agent joined a TLS coordinator")
	}
	ctls, err := ClientTLS(cert, coord.Addr())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		go func() {
			_ = Run(ctx, Config{Coordinator: coord.Addr(), Index: i, Token: testToken, Timings: patient(t), TLS: ctls, DialFor: 10 * time.Second})
		}()
	}
	resolved, _ := s.Resolved()
	if err := coord.Wait(ctx, resolved, false); err != nil {
		t.Fatal(err)
	}
	p, _ := s.Plan()
	r := run.NewRunner(p, run.PlanOptions{Executor: coord.Executor()})
	defer r.Close()
	if _, err := r.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	mem := &run.Memory{}
	if _, err := r.Run(ctx, mem); err != nil {
		t.Fatal(err)
	}
	if smp := mem.Samples[0]; smp.Error != "" || smp.Load == nil || smp.Load.Requests != n || len(smp.Agents) != 2 {
		t.Fatalf("sample over TLS: error %q, %d parts", smp.Error, len(smp.Agents))
	}
	if _, err := ServerTLS(cert, ""); err == nil {
		t.Error("a certificate without its key accepted")
	}
	if _, err := ClientTLS(filepath.Join(dir, "nope"), coord.Addr()); err == nil {
		t.Error("a missing CA file accepted")
	}
}
