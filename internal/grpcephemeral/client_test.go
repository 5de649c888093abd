package grpcephemeral

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"maps"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// A test's client: grpc-go's, calling by method path with dynamicpb
// messages built from the same compiled descriptors (no generated code).

// testCtx is a context bounded for one test.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dial connects to s: over TLS trusting s's certificate, or h2c.
func dial(t *testing.T, s *Server, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	creds := insecure.NewCredentials()
	if s.TLS() {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(s.CACertPEM()) {
			t.Fatal("CACertPEM: no certificate")
		}
		creds = credentials.NewClientTLSFromCert(pool, "")
	}
	return dialAddr(t, s.Addr(), append([]grpc.DialOption{grpc.WithTransportCredentials(creds)}, opts...)...)
}

// dialAddr makes a client of addr that the test's cleanup closes.
func dialAddr(t *testing.T, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// method returns the descriptor of a Greeter method.
func method(t *testing.T, name string) protoreflect.MethodDescriptor {
	t.Helper()
	sd, err := ServiceDescriptor()
	if err != nil {
		t.Fatal(err)
	}
	md := sd.Methods().ByName(protoreflect.Name(name))
	if md == nil {
		t.Fatalf("no method %s", name)
	}
	return md
}

// request builds a request of the method's input type; field values must
// have the field's Go type (string, int32, int64).
func request(t *testing.T, name string, fields map[string]any) *dynamicpb.Message {
	t.Helper()
	in := method(t, name).Input()
	m := dynamicpb.NewMessage(in)
	for k, v := range fields {
		fd := in.Fields().ByName(protoreflect.Name(k))
		if fd == nil {
			t.Fatalf("%s has no field %s", in.FullName(), k)
		}
		m.Set(fd, protoreflect.ValueOf(v))
	}
	return m
}

// reply is an empty HelloReply.
func reply(t *testing.T) *dynamicpb.Message {
	t.Helper()
	return dynamicpb.NewMessage(method(t, "SayHello").Output())
}

// text returns a HelloReply's message and id.
func text(m *dynamicpb.Message) (string, int64) {
	f := m.Descriptor().Fields()
	return m.Get(f.ByName("message")).String(), m.Get(f.ByName("id")).Int()
}

// path is a Greeter method's full path.
func path(name string) string { return "/" + ServiceName + "/" + name }

// invoke calls a unary method and returns the reply's message and id.
func invoke(ctx context.Context, t *testing.T, conn *grpc.ClientConn, name string, fields map[string]any, opts ...grpc.CallOption) (string, int64, error) {
	t.Helper()
	rep := reply(t)
	err := conn.Invoke(ctx, path(name), request(t, name, fields), rep, opts...)
	msg, id := text(rep)
	return msg, id, err
}

// stream opens a streaming call of the method.
func stream(ctx context.Context, t *testing.T, conn *grpc.ClientConn, name string) grpc.ClientStream {
	t.Helper()
	md := method(t, name)
	desc := &grpc.StreamDesc{StreamName: name, ClientStreams: md.IsStreamingClient(), ServerStreams: md.IsStreamingServer()}
	cs, err := conn.NewStream(ctx, desc, path(name))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// recvAll receives the replies of a stream to its end.
func recvAll(t *testing.T, cs grpc.ClientStream) ([]string, []int64, error) {
	t.Helper()
	var msgs []string
	var ids []int64
	for {
		rep := reply(t)
		err := cs.RecvMsg(rep)
		if errors.Is(err, io.EOF) {
			return msgs, ids, nil
		}
		if err != nil {
			return msgs, ids, err
		}
		m, id := text(rep)
		msgs, ids = append(msgs, m), append(ids, id)
	}
}

// waitCounts waits (a few seconds at most: a handler may start a moment
// after its client gave up, as with a deadline) until the server's counts
// are exactly the ones wanted, and fails with the last ones seen.
func waitCounts(t *testing.T, s *Server, calls map[string]int64, messages int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, n := s.Calls(), s.Messages()
		if maps.Equal(got, calls) && n == messages {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server counts: calls %v, messages %d; want %v, %d", got, n, calls, messages)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
