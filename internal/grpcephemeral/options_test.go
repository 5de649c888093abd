package grpcephemeral

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// reflect sends one request on a v1 reflection stream and returns the
// response.
func reflect(ctx context.Context, t *testing.T, conn *grpc.ClientConn, req *grpc_reflection_v1.ServerReflectionRequest) (*grpc_reflection_v1.ServerReflectionResponse, error) {
	t.Helper()
	rs, err := grpc_reflection_v1.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, err
	}
	defer rs.CloseSend()
	// A stream the server has already ended (Unimplemented) makes Send
	// return io.EOF; its status comes from Recv (grpc.ClientStream.SendMsg).
	if err := rs.Send(req); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return rs.Recv()
}

func TestReflection(t *testing.T) {
	s := StartT(t, Options{Reflection: true, TLS: true})
	conn := dial(t, s)
	ctx := testCtx(t)

	resp, err := reflect(ctx, t, conn, &grpc_reflection_v1.ServerReflectionRequest{
		MessageRequest: &grpc_reflection_v1.ServerReflectionRequest_ListServices{ListServices: "*"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, svc := range resp.GetListServicesResponse().GetService() {
		names = append(names, svc.GetName())
	}
	for _, want := range []string{ServiceName, "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"} {
		if !slices.Contains(names, want) {
			t.Errorf("listed services %q lack %s", names, want)
		}
	}

	// The service's file, from the compiled descriptors: every method
	// declared, Missing (not served) included.
	resp, err = reflect(ctx, t, conn, &grpc_reflection_v1.ServerReflectionRequest{
		MessageRequest: &grpc_reflection_v1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: ServiceName},
	})
	if err != nil {
		t.Fatal(err)
	}
	files := resp.GetFileDescriptorResponse().GetFileDescriptorProto()
	if len(files) != 1 {
		t.Fatalf("file containing %s: %d files (%v)", ServiceName, len(files), resp.GetErrorResponse())
	}
	var fdp descriptorpb.FileDescriptorProto
	if err := proto.Unmarshal(files[0], &fdp); err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, m := range fdp.GetService()[0].GetMethod() {
		methods = append(methods, m.GetName())
	}
	if want := []string{"SayHello", "Fail", "Sleep", "Lots", "Collect", "Chat", "Missing"}; fdp.GetName() != ProtoFile || !slices.Equal(methods, want) {
		t.Errorf("file %q methods %q, want %s with %q", fdp.GetName(), methods, ProtoFile, want)
	}

	// The reflection service's own descriptors still resolve.
	resp, err = reflect(ctx, t, conn, &grpc_reflection_v1.ServerReflectionRequest{
		MessageRequest: &grpc_reflection_v1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "grpc.reflection.v1.ServerReflection"},
	})
	if err != nil || len(resp.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
		t.Errorf("file containing grpc.reflection.v1.ServerReflection: %v %v", err, resp.GetErrorResponse())
	}

	// v1alpha, for older clients.
	rs, err := grpc_reflection_v1alpha.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rs.Send(&grpc_reflection_v1alpha.ServerReflectionRequest{
		MessageRequest: &grpc_reflection_v1alpha.ServerReflectionRequest_ListServices{ListServices: "*"},
	})
	ra, err := rs.Recv()
	if err != nil || len(ra.GetListServicesResponse().GetService()) == 0 {
		t.Errorf("v1alpha list services: %v %v", err, ra)
	}
	rs.CloseSend()

	// Reflection calls are not Greeter calls.
	waitCounts(t, s, map[string]int64{}, 0)
}

func TestNoReflection(t *testing.T) {
	s := StartT(t, Options{})
	_, err := reflect(testCtx(t), t, dial(t, s), &grpc_reflection_v1.ServerReflectionRequest{
		MessageRequest: &grpc_reflection_v1.ServerReflectionRequest_ListServices{ListServices: "*"},
	})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("reflection without Options.Reflection: %v, want Unimplemented", err)
	}
}

// inCompression records the compression of the replies a client receives.
type inCompression struct {
	mu   sync.Mutex
	seen []string
}

func (h *inCompression) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (h *inCompression) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (h *inCompression) HandleConn(context.Context, stats.ConnStats) {}
func (h *inCompression) HandleRPC(_ context.Context, s stats.RPCStats) {
	if in, ok := s.(*stats.InHeader); ok {
		h.mu.Lock()
		h.seen = append(h.seen, in.Compression)
		h.mu.Unlock()
	}
}

func TestGzip(t *testing.T) {
	ctx := testCtx(t)
	gz := grpc.UseCompressor(gzip.Name)

	s := StartT(t, Options{Gzip: true})
	var h inCompression
	conn := dial(t, s, grpc.WithStatsHandler(&h))
	msg, id, err := invoke(ctx, t, conn, "SayHello", map[string]any{"name": "zip", "id": int64(3)}, gz)
	if err != nil || msg != "hello zip" || id != 3 {
		t.Fatalf("gzip SayHello: %q %d %v", msg, id, err)
	}
	cs, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, path("Chat"), gz)
	if err != nil {
		t.Fatal(err)
	}
	cs.SendMsg(request(t, "Chat", map[string]any{"name": "zip"}))
	rep := reply(t)
	if err := cs.RecvMsg(rep); err != nil {
		t.Fatalf("gzip Chat: %v", err)
	}
	cs.CloseSend()
	h.mu.Lock()
	if !slices.Equal(h.seen, []string{"gzip", "gzip"}) {
		t.Errorf("replies' compression %q, want gzip for both calls", h.seen)
	}
	h.mu.Unlock()
	waitCounts(t, s, map[string]int64{"SayHello": 1, "Chat": 1}, 2)

	// Without Options.Gzip a gzip call is refused, uncounted; others pass.
	s = StartT(t, Options{})
	conn = dial(t, s)
	if _, _, err := invoke(ctx, t, conn, "SayHello", nil, gz); status.Code(err) != codes.Unimplemented {
		t.Errorf("gzip SayHello without Options.Gzip: %v, want Unimplemented", err)
	}
	cs, err = conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, path("Collect"), gz)
	if err != nil {
		t.Fatal(err)
	}
	cs.CloseSend()
	if err := cs.RecvMsg(reply(t)); status.Code(err) != codes.Unimplemented {
		t.Errorf("gzip Collect without Options.Gzip: %v, want Unimplemented", err)
	}
	if _, _, err := invoke(ctx, t, conn, "SayHello", nil); err != nil {
		t.Errorf("plain SayHello: %v", err)
	}
	waitCounts(t, s, map[string]int64{"SayHello": 1}, 1)
}
