package grpcephemeral

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // registers the gzip compressor (see Options.Gzip)
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Bounds of the requests, beyond which a call is INVALID_ARGUMENT.
const (
	maxSleepMS   = 60000
	maxLotsCount = 1_000_000
)

// greeter serves the Greeter service with dynamicpb messages.
type greeter struct {
	s         *Server
	reply     protoreflect.MessageDescriptor // HelloReply
	replyText protoreflect.FieldDescriptor   // HelloReply.message
	replyID   protoreflect.FieldDescriptor   // HelloReply.id
}

// unaryFunc handles a unary call's decoded request.
type unaryFunc func(ctx context.Context, req protoreflect.Message) (*dynamicpb.Message, error)

// streamFunc handles a streaming call.
type streamFunc func(c *call) error

// serviceDesc builds the grpc.ServiceDesc of the Greeter service from its
// compiled descriptor, and the call counters. Missing is left out, so that
// grpc-go answers it UNIMPLEMENTED by itself.
func (s *Server) serviceDesc(fd protoreflect.FileDescriptor) (*grpc.ServiceDesc, error) {
	sd := fd.Services().ByName(protoreflect.FullName(ServiceName).Name())
	reply := fd.Messages().ByName("HelloReply")
	if sd == nil || reply == nil {
		return nil, fmt.Errorf("grpcephemeral: %s lacks the service %s or HelloReply", ProtoFile, ServiceName)
	}
	g := &greeter{s: s, reply: reply, replyText: reply.Fields().ByName("message"), replyID: reply.Fields().ByName("id")}
	desc := &grpc.ServiceDesc{
		ServiceName: ServiceName,
		HandlerType: (*any)(nil), // the handlers are closures: any server value will do
		Metadata:    ProtoFile,
	}
	s.calls = make(map[string]*atomic.Int64)
	// method checks that the method is declared with the streaming shape its
	// handler is written for, and makes its counter.
	method := func(name string, clientStreams, serverStreams bool) (protoreflect.MethodDescriptor, *atomic.Int64, error) {
		md := sd.Methods().ByName(protoreflect.Name(name))
		if md == nil {
			return nil, nil, fmt.Errorf("grpcephemeral: %s: no method %s", ProtoFile, name)
		}
		if md.IsStreamingClient() != clientStreams || md.IsStreamingServer() != serverStreams {
			return nil, nil, fmt.Errorf("grpcephemeral: %s: method %s does not stream as its handler expects", ProtoFile, name)
		}
		if md.Output() != reply {
			return nil, nil, fmt.Errorf("grpcephemeral: %s: method %s does not return HelloReply", ProtoFile, name)
		}
		n := new(atomic.Int64)
		s.calls[name] = n
		return md, n, nil
	}
	for _, u := range []struct {
		name string
		h    unaryFunc
	}{
		{"SayHello", g.sayHello},
		{"Fail", g.fail},
		{"Sleep", g.sleep},
	} {
		md, n, err := method(u.name, false, false)
		if err != nil {
			return nil, err
		}
		desc.Methods = append(desc.Methods, g.unary(md, n, u.h))
	}
	for _, st := range []struct {
		name           string
		client, server bool
		h              streamFunc
	}{
		{"Lots", false, true, g.lots},
		{"Collect", true, false, g.collect},
		{"Chat", true, true, g.chat},
	} {
		md, n, err := method(st.name, st.client, st.server)
		if err != nil {
			return nil, err
		}
		desc.Streams = append(desc.Streams, g.stream(md, n, st.h))
	}
	if sd.Methods().ByName("Missing") == nil {
		return nil, fmt.Errorf("grpcephemeral: %s: no method Missing", ProtoFile)
	}
	return desc, nil
}

// unary makes the grpc.MethodDesc of a unary method: it counts the call,
// decodes the request into a dynamicpb message of the method's input type,
// counts it, and runs h (through the server's unary interceptor, if any).
func (g *greeter) unary(md protoreflect.MethodDescriptor, calls *atomic.Int64, h unaryFunc) grpc.MethodDesc {
	in := md.Input()
	full := "/" + ServiceName + "/" + string(md.Name())
	return grpc.MethodDesc{
		MethodName: string(md.Name()),
		Handler: func(_ any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			if err := g.s.refuseCompressed(ctx); err != nil {
				return nil, err
			}
			calls.Add(1)
			req := dynamicpb.NewMessage(in)
			if err := dec(req); err != nil {
				return nil, err
			}
			g.s.messages.Add(1)
			if ic == nil {
				return h(ctx, req)
			}
			info := &grpc.UnaryServerInfo{Server: g.s, FullMethod: full}
			return ic(ctx, req, info, func(ctx context.Context, r any) (any, error) {
				return h(ctx, r.(protoreflect.ProtoMessage).ProtoReflect())
			})
		},
	}
}

// call is one streaming call being served.
type call struct {
	g  *greeter
	ss grpc.ServerStream
	in protoreflect.MessageDescriptor
}

// recv receives and counts one request; io.EOF when the client is done.
func (c *call) recv() (protoreflect.Message, error) {
	m := dynamicpb.NewMessage(c.in)
	if err := c.ss.RecvMsg(m); err != nil {
		return nil, err
	}
	c.g.s.messages.Add(1)
	return m, nil
}

// stream makes the grpc.StreamDesc of a streaming method.
func (g *greeter) stream(md protoreflect.MethodDescriptor, calls *atomic.Int64, h streamFunc) grpc.StreamDesc {
	in := md.Input()
	return grpc.StreamDesc{
		StreamName:    string(md.Name()),
		ClientStreams: md.IsStreamingClient(),
		ServerStreams: md.IsStreamingServer(),
		Handler: func(_ any, ss grpc.ServerStream) error {
			if err := g.s.refuseCompressed(ss.Context()); err != nil {
				return err
			}
			calls.Add(1)
			return h(&call{g: g, ss: ss, in: in})
		},
	}
}

// refuseCompressed refuses a compressed call when Options.Gzip is off, with
// the status grpc-go gives when it has no decompressor for the encoding.
func (s *Server) refuseCompressed(ctx context.Context) error {
	if s.opts.Gzip {
		return nil
	}
	st, ok := grpc.ServerTransportStreamFromContext(ctx).(interface{ RecvCompress() string })
	if !ok {
		return nil
	}
	if enc := st.RecvCompress(); enc != "" && enc != "identity" {
		return status.Errorf(codes.Unimplemented, "grpc: Decompressor is not installed for grpc-encoding %q", enc)
	}
	return nil
}

// newReply returns a HelloReply.
func (g *greeter) newReply(text string, id int64) *dynamicpb.Message {
	m := dynamicpb.NewMessage(g.reply)
	m.Set(g.replyText, protoreflect.ValueOfString(text))
	m.Set(g.replyID, protoreflect.ValueOfInt64(id))
	return m
}

// field returns the value of a request's field by name.
func field(m protoreflect.Message, name protoreflect.Name) protoreflect.Value {
	return m.Get(m.Descriptor().Fields().ByName(name))
}

// sayHello answers "hello " + name, with the request's id.
func (g *greeter) sayHello(_ context.Context, req protoreflect.Message) (*dynamicpb.Message, error) {
	return g.newReply("hello "+field(req, "name").String(), field(req, "id").Int()), nil
}

// fail answers with the status asked for: code 0 is OK (reply "ok"), 1–16
// that code with the message, anything else INVALID_ARGUMENT.
func (g *greeter) fail(_ context.Context, req protoreflect.Message) (*dynamicpb.Message, error) {
	code := field(req, "code").Int()
	switch {
	case code == 0:
		return g.newReply("ok", 0), nil
	case code < 1 || code > 16:
		return nil, status.Errorf(codes.InvalidArgument, "code %d out of range", code)
	}
	return nil, status.Error(codes.Code(code), field(req, "message").String())
}

// sleep answers "slept N ms" (id N) after ms milliseconds (0–60000), or ends
// with the call's context: DEADLINE_EXCEEDED or CANCELLED.
func (g *greeter) sleep(ctx context.Context, req protoreflect.Message) (*dynamicpb.Message, error) {
	ms := field(req, "ms").Int()
	if ms < 0 || ms > maxSleepMS {
		return nil, status.Errorf(codes.InvalidArgument, "ms %d out of range 0–%d", ms, maxSleepMS)
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return g.newReply("slept "+strconv.FormatInt(ms, 10)+" ms", ms), nil
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}

// lots streams count replies (0–1,000,000), "hello NAME I" with id I for I
// from 0.
func (g *greeter) lots(c *call) error {
	req, err := c.recv()
	if err != nil {
		return err
	}
	count := field(req, "count").Int()
	if count < 0 || count > maxLotsCount {
		return status.Errorf(codes.InvalidArgument, "count %d out of range 0–%d", count, maxLotsCount)
	}
	prefix := "hello " + field(req, "name").String() + " "
	for i := range count {
		if err := c.ss.SendMsg(g.newReply(prefix+strconv.FormatInt(i, 10), i)); err != nil {
			return err
		}
	}
	return nil
}

// collect reads the requests to the end and answers "collected N", id N.
func (g *greeter) collect(c *call) error {
	var n int64
	for {
		_, err := c.recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		n++
	}
	return c.ss.SendMsg(g.newReply("collected "+strconv.FormatInt(n, 10), n))
}

// chat answers each request with "hello " + name and its id.
func (g *greeter) chat(c *call) error {
	for {
		req, err := c.recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := c.ss.SendMsg(g.newReply("hello "+field(req, "name").String(), field(req, "id").Int())); err != nil {
			return err
		}
	}
}
