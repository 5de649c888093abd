package grpcreflect

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/benchrig/benchrig/internal/grpcephemeral"
	"github.com/benchrig/benchrig/internal/protocol/grpc/message"
)

// testCtx is a context bounded for one test.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// optionsOf reaches srv: over TLS trusting its certificate, or h2c.
func optionsOf(t *testing.T, srv *grpcephemeral.Server) Options {
	t.Helper()
	o := Options{Addr: srv.Addr(), Timeout: 5 * time.Second}
	if srv.TLS() {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(srv.CACertPEM()) {
			t.Fatal("CACertPEM: no certificate")
		}
		o.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return o
}

// loaded is greeter.proto parsed from its text, as --proto would.
func loaded(t *testing.T) *message.Set {
	t.Helper()
	path, err := grpcephemeral.WriteProto(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := message.Load([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fileProto is a file's descriptor proto without its source code info
// (comments and positions, which server reflection keeps and Load drops).
func fileProto(fd protoreflect.FileDescriptor) *descriptorpb.FileDescriptorProto {
	p := protodesc.ToFileDescriptorProto(fd)
	p.SourceCodeInfo = nil
	return p
}

// greeterMethods are the methods greeter.proto declares, sorted.
var greeterMethods = []string{
	"benchrig.test.v1.Greeter/Chat", "benchrig.test.v1.Greeter/Collect",
	"benchrig.test.v1.Greeter/Fail", "benchrig.test.v1.Greeter/Lots",
	"benchrig.test.v1.Greeter/Missing", "benchrig.test.v1.Greeter/SayHello",
	"benchrig.test.v1.Greeter/Sleep",
}

func TestResolve(t *testing.T) {
	want := loaded(t)
	for _, tlsOn := range []bool{false, true} {
		name := "h2c"
		if tlsOn {
			name = "tls"
		}
		t.Run(name, func(t *testing.T) {
			srv := grpcephemeral.StartT(t, grpcephemeral.Options{TLS: tlsOn, Reflection: true})
			got, err := Resolve(testCtx(t), "benchrig.test.v1.Greeter/SayHello", optionsOf(t, srv))
			if err != nil {
				t.Fatal(err)
			}
			if m := got.Methods(); !slices.Equal(m, greeterMethods) {
				t.Errorf("Methods() = %q, want %q", m, greeterMethods)
			}
			files := got.Files()
			if len(files) != 1 || files[0].Path() != grpcephemeral.ProtoFile {
				t.Fatalf("Files() = %v, want the one file %s", files, grpcephemeral.ProtoFile)
			}
			wantFile := want.Files()[0]
			if g, w := fileProto(files[0]), fileProto(wantFile); !proto.Equal(g, w) {
				t.Errorf("the file from reflection differs from the loaded one:\n got %v\nwant %v", g, w)
			}
			for _, name := range greeterMethods {
				gm, err := got.Method(name)
				if err != nil {
					t.Fatal(err)
				}
				wm, err := want.Method(name)
				if err != nil {
					t.Fatal(err)
				}
				if gm.Path != wm.Path || gm.ClientStreaming() != wm.ClientStreaming() || gm.ServerStreaming() != wm.ServerStreaming() {
					t.Errorf("%s: path %s (streams %v/%v), want %s (%v/%v)", name, gm.Path,
						gm.ClientStreaming(), gm.ServerStreaming(), wm.Path, wm.ClientStreaming(), wm.ServerStreaming())
				}
				for _, io := range []struct {
					what     string
					got, exp protoreflect.MessageDescriptor
				}{{"input", gm.Desc.Input(), wm.Desc.Input()}, {"output", gm.Desc.Output(), wm.Desc.Output()}} {
					g, w := protodesc.ToDescriptorProto(io.got), protodesc.ToDescriptorProto(io.exp)
					if io.got.FullName() != io.exp.FullName() || !proto.Equal(g, w) {
						t.Errorf("%s: %s %s %v, want %s %v", name, io.what, io.got.FullName(), g, io.exp.FullName(), w)
					}
				}
			}
		})
	}
}

func TestResolveMethodForms(t *testing.T) {
	srv := grpcephemeral.StartT(t, grpcephemeral.Options{Reflection: true})
	for _, m := range []string{
		"benchrig.test.v1.Greeter.SayHello",
		"/benchrig.test.v1.Greeter/Missing",
		"benchrig.test.v1.Greeter/Chat",
	} {
		s, err := Resolve(testCtx(t), m, optionsOf(t, srv))
		if err != nil {
			t.Errorf("%s: %v", m, err)
			continue
		}
		if _, err := s.Method(m); err != nil {
			t.Errorf("%s: the Set has not the method: %v", m, err)
		}
	}
	for _, m := range []string{"", "SayHello", "benchrig.test.v1.Greeter/", "/a/b/c"} {
		if _, err := Resolve(testCtx(t), m, optionsOf(t, srv)); err == nil || !strings.Contains(err.Error(), "want pkg.Service/Method") {
			t.Errorf("%q: error %v, want one about the method's form", m, err)
		}
	}
}

func TestServices(t *testing.T) {
	srv := grpcephemeral.StartT(t, grpcephemeral.Options{TLS: true, Reflection: true})
	got, err := Services(testCtx(t), optionsOf(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{grpcephemeral.ServiceName, "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"}
	if !slices.Equal(got, want) {
		t.Errorf("Services() = %q, want %q", got, want)
	}
}

func TestNoReflection(t *testing.T) {
	srv := grpcephemeral.StartT(t, grpcephemeral.Options{})
	o := optionsOf(t, srv)
	_, err := Resolve(testCtx(t), "benchrig.test.v1.Greeter/SayHello", o)
	want := "the server at " + srv.Addr() + " does not serve reflection (grpc.reflection.v1 and v1alpha: UNIMPLEMENTED): give --proto"
	if err == nil || err.Error() != want {
		t.Errorf("Resolve: error %v, want %q", err, want)
	}
	if _, err := Services(testCtx(t), o); err == nil || err.Error() != want {
		t.Errorf("Services: error %v, want %q", err, want)
	}
}

func TestUnknownService(t *testing.T) {
	srv := grpcephemeral.StartT(t, grpcephemeral.Options{Reflection: true})
	_, err := Resolve(testCtx(t), "benchrig.test.v1.Nope/SayHello", optionsOf(t, srv))
	want := `the server at ` + srv.Addr() + ` has no service "benchrig.test.v1.Nope"; its services: ` +
		`benchrig.test.v1.Greeter, grpc.reflection.v1.ServerReflection, grpc.reflection.v1alpha.ServerReflection`
	if err == nil || err.Error() != want {
		t.Errorf("error %v,\nwant %q", err, want)
	}
}

func TestUnknownMethod(t *testing.T) {
	srv := grpcephemeral.StartT(t, grpcephemeral.Options{Reflection: true})
	_, err := Resolve(testCtx(t), "benchrig.test.v1.Greeter/Nope", optionsOf(t, srv))
	if err == nil || !strings.Contains(err.Error(), srv.Addr()) || !strings.Contains(err.Error(), `no method "Nope"`) ||
		!strings.Contains(err.Error(), "SayHello") {
		t.Errorf("error %v, want one naming the address, the method and the service's methods", err)
	}
}

// TestNoAnswer: a server that accepts connections and never answers ends the
// exchange at the timeout.
func TestNoAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn // held open, never read
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	for _, withTLS := range []bool{false, true} {
		o := Options{Addr: ln.Addr().String(), Timeout: 300 * time.Millisecond}
		if withTLS {
			o.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		start := time.Now()
		_, err := Resolve(testCtx(t), "benchrig.test.v1.Greeter/SayHello", o)
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), o.Addr) {
			t.Errorf("TLS %v: error %v, want one naming %s", withTLS, err, o.Addr)
		}
		if took > 5*time.Second {
			t.Errorf("TLS %v: took %v with a timeout of %v", withTLS, took, o.Timeout)
		}
		t.Logf("TLS %v: %v after %v", withTLS, err, took)
	}
}

func TestConnectionFailures(t *testing.T) {
	srv := grpcephemeral.StartT(t, grpcephemeral.Options{TLS: true, Reflection: true})
	// A client that does not trust the server's certificate.
	o := Options{Addr: srv.Addr(), Timeout: 5 * time.Second, TLS: &tls.Config{MinVersion: tls.VersionTLS12}}
	_, err := Resolve(testCtx(t), "benchrig.test.v1.Greeter/SayHello", o)
	t.Logf("untrusted certificate: %v", err)
	if err == nil || !strings.Contains(err.Error(), srv.Addr()) || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate: error %v, want one naming %s and the certificate", err, srv.Addr())
	}
	// Nothing listens.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = Services(testCtx(t), Options{Addr: addr, Timeout: 5 * time.Second})
	t.Logf("nothing listening: %v", err)
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("nothing listening: error %v, want one naming %s", err, addr)
	}
	if _, err := Services(testCtx(t), Options{}); err == nil {
		t.Error("no address: no error")
	}
}
