package grpcreflect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/benchrig/benchrig/internal/protocol/grpc/message"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
)

// The reflection call of each version. grpc.reflection.v1alpha's messages
// are grpc.reflection.v1's under another package: the same fields, numbers
// and types, so the same bytes on the wire. Both versions are spoken with
// v1's Go types.
const (
	methodV1      = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
	methodV1alpha = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
)

// streamDesc is the reflection call's shape: a bidirectional stream.
var streamDesc = &grpc.StreamDesc{StreamName: "ServerReflectionInfo", ServerStreams: true, ClientStreams: true}

// errTimeout is the cause of the context's end when Options.Timeout passes.
var errTimeout = errors.New("reflection timeout")

// session is one reflection stream to a server, asked one request at a
// time.
type session struct {
	addr    string
	timeout time.Duration
	ctx     context.Context
	cancel  context.CancelFunc
	cc      *grpc.ClientConn
	stream  grpc.ClientStream
	method  string // the reflection call in use
	asked   bool   // a request has been answered on the stream
}

// open connects to the server of o (lazily: grpc-go connects on the first
// call) and bounds the whole exchange by o's timeout. close ends it.
func open(ctx context.Context, o Options) (*session, error) {
	if o.Addr == "" {
		return nil, errors.New("reflection: no server address given")
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	creds := insecure.NewCredentials()
	if o.TLS != nil {
		creds = credentials.NewTLS(o.TLS.Clone())
	}
	dopts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDisableServiceConfig(),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxResponse)),
	}
	if o.Authority != "" {
		dopts = append(dopts, grpc.WithAuthority(o.Authority))
	}
	// passthrough: the address is dialled as given, without grpc-go's DNS
	// resolver and its service config lookups.
	cc, err := grpc.NewClient("passthrough:///"+o.Addr, dopts...)
	if err != nil {
		return nil, fmt.Errorf("reflection at %s: %w", o.Addr, err)
	}
	s := &session{addr: o.Addr, timeout: timeout, cc: cc, method: methodV1}
	s.ctx, s.cancel = context.WithTimeoutCause(ctx, timeout, errTimeout)
	if len(o.Metadata) > 0 {
		md := metadata.MD{}
		for k, v := range o.Metadata {
			md.Append(k, v)
		}
		s.ctx = metadata.NewOutgoingContext(s.ctx, md)
	}
	return s, nil
}

// close ends the stream and the connection.
func (s *session) close() {
	if s.stream != nil {
		_ = s.stream.CloseSend()
	}
	s.cancel()
	_ = s.cc.Close()
}

// ask sends req and returns the server's answer. The first request goes to
// grpc.reflection.v1, then to v1alpha when the server answers UNIMPLEMENTED;
// both UNIMPLEMENTED is the server serving no reflection. An error response
// of the server is returned as a *serverError.
func (s *session) ask(req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
	resp, err := s.exchange(req)
	if err != nil && !s.asked && s.method == methodV1 && status.Code(err) == codes.Unimplemented {
		s.method = methodV1alpha
		resp, err = s.exchange(req)
	}
	if err != nil {
		return nil, s.callError(err)
	}
	s.asked = true
	if e := resp.GetErrorResponse(); e != nil {
		return nil, &serverError{code: codes.Code(e.GetErrorCode()), msg: e.GetErrorMessage()}
	}
	return resp, nil
}

// exchange sends req on the stream (opened on s.method if need be) and
// receives one response.
func (s *session) exchange(req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
	if s.stream == nil || !s.asked {
		if s.stream != nil {
			_ = s.stream.CloseSend()
		}
		st, err := s.cc.NewStream(s.ctx, streamDesc, s.method)
		if err != nil {
			return nil, err
		}
		s.stream = st
	}
	// io.EOF from SendMsg: the stream has ended; RecvMsg tells why.
	if err := s.stream.SendMsg(req); err != nil && err != io.EOF {
		return nil, err
	}
	resp := new(rpb.ServerReflectionResponse)
	if err := s.stream.RecvMsg(resp); err != nil {
		if err == io.EOF {
			return nil, status.Error(codes.Internal, "the server ended the reflection stream without an answer")
		}
		return nil, err
	}
	return resp, nil
}

// callError says what went wrong with the reflection call, naming the
// server's address.
func (s *session) callError(err error) error {
	if context.Cause(s.ctx) == errTimeout {
		return fmt.Errorf("the server at %s did not finish the reflection exchange within %v (no answer, or a slow one)", s.addr, s.timeout)
	}
	if ctxErr := s.ctx.Err(); ctxErr != nil {
		return fmt.Errorf("reflection at %s: %w", s.addr, ctxErr)
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("reflection at %s: %w", s.addr, err)
	}
	switch st.Code() {
	case codes.Unimplemented:
		if s.method == methodV1alpha {
			return fmt.Errorf("the server at %s does not serve reflection (grpc.reflection.v1 and v1alpha: UNIMPLEMENTED): give --proto", s.addr)
		}
	case codes.Unavailable:
		return fmt.Errorf("cannot reach the server at %s for reflection: %s", s.addr, st.Message())
	case codes.ResourceExhausted:
		return fmt.Errorf("reflection at %s: %s (a response is bounded by %d bytes)", s.addr, st.Message(), MaxResponse)
	}
	return fmt.Errorf("reflection at %s: %s: %s", s.addr, codeName(st.Code()), st.Message())
}

// serverError is an error response of the reflection service (a symbol or
// file it does not have, for one).
type serverError struct {
	code codes.Code
	msg  string
}

func (e *serverError) Error() string {
	return fmt.Sprintf("%s: %s", codeName(e.code), e.msg)
}

// codeName is a status code's name as gRPC spells it, NOT_FOUND.
func codeName(c codes.Code) string {
	name, _ := message.CodeName(strconv.FormatUint(uint64(c), 10))
	return name
}
