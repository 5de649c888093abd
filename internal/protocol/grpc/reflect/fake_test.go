package grpcreflect

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	_ "google.golang.org/protobuf/types/known/timestamppb" // google/protobuf/timestamp.proto in GlobalFiles
)

// Servers of reflection other than grpcephemeral's: grpc-go's reflection
// service registered by the test, over h2c.

// serve serves s on a free loopback port until the test ends and returns
// the address.
func serve(t *testing.T, s *grpc.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	return ln.Addr().String()
}

// seen records the metadata of the streams a server's interceptor sees.
type seen struct {
	mu sync.Mutex
	md []metadata.MD
}

func (s *seen) intercept(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	md, _ := metadata.FromIncomingContext(ss.Context())
	s.mu.Lock()
	s.md = append(s.md, md)
	s.mu.Unlock()
	return h(srv, ss)
}

// TestV1alphaOnly: a server of grpc.reflection.v1alpha alone is asked in
// v1alpha after v1's UNIMPLEMENTED; the metadata and authority are sent.
func TestV1alphaOnly(t *testing.T) {
	var rec seen
	s := grpc.NewServer(grpc.StreamInterceptor(rec.intercept))
	grpc_reflection_v1alpha.RegisterServerReflectionServer(s, reflection.NewServer(reflection.ServerOptions{Services: s}))
	addr := serve(t, s)
	const method = "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
	o := Options{Addr: addr, Timeout: 5 * time.Second, Authority: "svc.example:443",
		Metadata: map[string]string{"authorization": "Bearer t0ken"}}
	set, err := Resolve(testCtx(t), method, o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := set.Method(method)
	if err != nil {
		t.Fatal(err)
	}
	if !m.ClientStreaming() || !m.ServerStreaming() {
		t.Errorf("%s: streams %v/%v, want both", method, m.ClientStreaming(), m.ServerStreaming())
	}
	if in := m.Desc.Input().FullName(); in != "grpc.reflection.v1alpha.ServerReflectionRequest" {
		t.Errorf("input %s", in)
	}
	got, err := Services(testCtx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "grpc.reflection.v1alpha.ServerReflection" {
		t.Errorf("Services() = %q, want v1alpha's alone", got)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.md) != 2 {
		t.Fatalf("the server saw %d reflection streams, want 2 (one for Resolve, one for Services)", len(rec.md))
	}
	for i, md := range rec.md {
		if a := md.Get("authorization"); len(a) != 1 || a[0] != "Bearer t0ken" {
			t.Errorf("stream %d: authorization %q", i+1, a)
		}
		if a := md.Get(":authority"); len(a) != 1 || a[0] != o.Authority {
			t.Errorf("stream %d: :authority %q, want %q", i+1, a, o.Authority)
		}
	}
}

// services is a reflection server's list of services.
type services []string

func (s services) GetServiceInfo() map[string]grpc.ServiceInfo {
	m := map[string]grpc.ServiceInfo{}
	for _, name := range s {
		m[name] = grpc.ServiceInfo{}
	}
	return m
}

// unresolved compiles the .proto sources and returns the named files
// rebuilt with their imports left unresolved (placeholders), as a server
// holds a file whose imports it lacks: grpc-go's reflection then sends the
// file alone.
func unresolved(t *testing.T, sources map[string]string, names ...string) []protoreflect.FileDescriptor {
	t.Helper()
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(sources),
	})}
	compiled, err := c.Compile(context.Background(), names...)
	if err != nil {
		t.Fatal(err)
	}
	var out []protoreflect.FileDescriptor
	for _, f := range compiled {
		fd, err := protodesc.FileOptions{AllowUnresolvable: true}.New(protodesc.ToFileDescriptorProto(f), new(protoregistry.Files))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fd)
	}
	return out
}

// reflectionOf serves grpc.reflection.v1 of the files (and nothing else:
// no google/protobuf/ file) and returns its address.
func reflectionOf(t *testing.T, svcs services, files ...protoreflect.FileDescriptor) string {
	t.Helper()
	reg := new(protoregistry.Files)
	for _, fd := range files {
		if err := reg.RegisterFile(fd); err != nil {
			t.Fatal(err)
		}
	}
	s := grpc.NewServer()
	grpc_reflection_v1.RegisterServerReflectionServer(s, reflection.NewServerV1(reflection.ServerOptions{Services: svcs, DescriptorResolver: reg}))
	return serve(t, s)
}

// TestImports: a well-known import the server does not have is taken from
// the binary's; another is an error naming it and its importer.
func TestImports(t *testing.T) {
	files := unresolved(t, map[string]string{
		"wk.proto": `syntax = "proto3"; package test.wk;
			import "google/protobuf/timestamp.proto";
			message Req { google.protobuf.Timestamp at = 1; }
			service Svc { rpc Call(Req) returns (Req); }`,
		"bad.proto": `syntax = "proto3"; package test.bad;
			import "nowhere/gone.proto";
			service Svc { rpc Call(test.gone.Thing) returns (test.gone.Thing); }`,
		"nowhere/gone.proto": `syntax = "proto3"; package test.gone; message Thing {}`,
	}, "wk.proto", "bad.proto")
	addr := reflectionOf(t, services{"test.wk.Svc", "test.bad.Svc"}, files...)
	o := Options{Addr: addr, Timeout: 5 * time.Second}

	set, err := Resolve(testCtx(t), "test.wk.Svc/Call", o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := set.Method("test.wk.Svc/Call")
	if err != nil {
		t.Fatal(err)
	}
	at := m.Desc.Input().Fields().ByName("at")
	if at == nil || at.Message() == nil || at.Message().IsPlaceholder() || at.Message().FullName() != "google.protobuf.Timestamp" {
		t.Fatalf("Req.at: %v, want a resolved google.protobuf.Timestamp", at)
	}
	if at.Message().Fields().ByName("seconds") == nil {
		t.Error("google.protobuf.Timestamp has no field seconds")
	}

	_, err = Resolve(testCtx(t), "test.bad.Svc/Call", o)
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "nowhere/gone.proto, imported by bad.proto") ||
		!strings.Contains(err.Error(), "NOT_FOUND") {
		t.Errorf("error %v, want one naming %s, the missing file and its importer", err, addr)
	}
}

// TestMaxFiles: a service whose file imports more than MaxFiles files is
// refused.
func TestMaxFiles(t *testing.T) {
	// f0 imports f1 … imports fN; f0 declares the service.
	n := MaxFiles + 1
	reg := new(protoregistry.Files)
	var top protoreflect.FileDescriptor
	for i := n - 1; i >= 0; i-- {
		p := &descriptorpb.FileDescriptorProto{
			Name:    proto.String(fmt.Sprintf("f%d.proto", i)),
			Package: proto.String(fmt.Sprintf("test.f%d", i)),
			Syntax:  proto.String("proto3"),
		}
		if i+1 < n {
			p.Dependency = []string{fmt.Sprintf("f%d.proto", i+1)}
		}
		if i == 0 {
			p.MessageType = []*descriptorpb.DescriptorProto{{Name: proto.String("M")}}
			p.Service = []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("Svc"), Method: []*descriptorpb.MethodDescriptorProto{{
				Name: proto.String("Call"), InputType: proto.String(".test.f0.M"), OutputType: proto.String(".test.f0.M"),
			}}}}
		}
		fd, err := protodesc.NewFile(p, reg)
		if err != nil {
			t.Fatal(err)
		}
		if err := reg.RegisterFile(fd); err != nil {
			t.Fatal(err)
		}
		top = fd
	}
	addr := reflectionOf(t, services{"test.f0.Svc"}, top)
	_, err := Resolve(testCtx(t), "test.f0.Svc/Call", Options{Addr: addr, Timeout: 5 * time.Second})
	want := fmt.Sprintf("more than %d files, the bound", MaxFiles)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), addr) {
		t.Errorf("error %v, want %q naming %s", err, want, addr)
	}
}
