// Package grpcreflect takes a gRPC method's descriptors from the server's
// reflection service (grpc.reflection.v1, or v1alpha for the servers that
// only know it) instead of .proto files: the file that declares the
// method's service and every file it imports, built into a *message.Set.
//
// It is for setting a run up only: it uses grpc-go's client, which is never
// on benchrig's load path (the driver carries the calls on benchrig's own
// HTTP/2).
package grpcreflect

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/benchrig/benchrig/internal/protocol/grpc/message"
)

const (
	// DefaultTimeout bounds the whole reflection exchange when
	// Options.Timeout is 0.
	DefaultTimeout = 10 * time.Second
	// MaxFiles bounds the file descriptors taken for one method, imports
	// included (as message.MaxFiles bounds the .proto files read).
	MaxFiles = message.MaxFiles
	// MaxFileSize bounds one file descriptor, in bytes.
	MaxFileSize = message.MaxFileSize
	// MaxResponse bounds one response of the reflection service, in bytes
	// (a response may carry several files).
	MaxResponse = 64 << 20
	// maxListed is how many services an error about an unknown one lists.
	maxListed = 20
	// wellKnownPrefix is where the well-known files live, which are taken
	// from the binary's own descriptors when the server does not send them.
	wellKnownPrefix = "google/protobuf/"
)

// Options says how to reach the server.
type Options struct {
	// Addr is the server's host:port.
	Addr string
	// TLS is the client's TLS configuration; nil speaks cleartext HTTP/2
	// (h2c).
	TLS *tls.Config
	// Authority is the :authority of the reflection call; empty: Addr.
	Authority string
	// Metadata is sent with the reflection call (an authorization header,
	// for one).
	Metadata map[string]string
	// Timeout bounds the whole exchange, connecting included; 0 means
	// DefaultTimeout.
	Timeout time.Duration
}

// Resolve asks the server of o for the file descriptors that define the
// service of method ("pkg.Service/Method" or "pkg.Service.Method") and all
// their dependencies: the file containing the service's symbol, then each
// import it lacks by file name until none is missing. A well-known file
// (google/protobuf/…) the server does not have is taken from the binary's
// own. It speaks grpc.reflection.v1, or v1alpha when the server answers v1
// UNIMPLEMENTED. The files are built with protodesc.NewFiles and returned
// as a Set (message.FromDescriptors) of the service's file; the method must
// be one of the service's.
//
// Errors name the address: a server without reflection, an unknown service
// (listing at most 20 of the server's services), an unknown method, the
// timeout, a connection or TLS failure. At most MaxFiles files are taken,
// each at most MaxFileSize bytes.
func Resolve(ctx context.Context, method string, o Options) (*message.Set, error) {
	svc, err := serviceOf(method)
	if err != nil {
		return nil, err
	}
	s, err := open(ctx, o)
	if err != nil {
		return nil, err
	}
	defer s.close()
	r := &resolver{s: s, files: map[string]*descriptorpb.FileDescriptorProto{}}
	resp, err := s.ask(&rpb.ServerReflectionRequest{
		MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: svc},
	})
	if err != nil {
		var se *serverError
		if !errors.As(err, &se) {
			return nil, err
		}
		if se.code == codes.NotFound {
			return nil, s.unknownService(svc)
		}
		return nil, r.fail("the file of service %s: %v", svc, err)
	}
	if err := r.take(resp); err != nil {
		return nil, err
	}
	if err := r.closeImports(); err != nil {
		return nil, err
	}
	reg, err := protodesc.NewFiles(&descriptorpb.FileDescriptorSet{File: r.order})
	if err != nil {
		return nil, r.fail("its descriptors do not build: %v", err)
	}
	d, err := reg.FindDescriptorByName(protoreflect.FullName(svc))
	if err != nil {
		return nil, r.fail("the files it sent for %s do not declare that service", svc)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, r.fail("%s is not a service", svc)
	}
	set, err := message.FromDescriptors([]protoreflect.FileDescriptor{sd.ParentFile()})
	if err != nil {
		return nil, r.fail("%v", err)
	}
	if _, err := set.Method(method); err != nil {
		return nil, r.fail("%v", err)
	}
	return set, nil
}

// Services lists the services the server of o offers (the reflection
// services among them), sorted.
func Services(ctx context.Context, o Options) ([]string, error) {
	s, err := open(ctx, o)
	if err != nil {
		return nil, err
	}
	defer s.close()
	return s.services()
}

// services asks the server for its services' names, sorted.
func (s *session) services() ([]string, error) {
	resp, err := s.ask(&rpb.ServerReflectionRequest{
		MessageRequest: &rpb.ServerReflectionRequest_ListServices{ListServices: "*"},
	})
	if err != nil {
		var se *serverError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("reflection at %s: listing the services: %v", s.addr, err)
		}
		return nil, err
	}
	list := resp.GetListServicesResponse()
	if list == nil {
		return nil, fmt.Errorf("reflection at %s: the server answered a list of services with something else", s.addr)
	}
	names := make([]string, 0, len(list.GetService()))
	for _, svc := range list.GetService() {
		names = append(names, svc.GetName())
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// unknownService is the error of a service the server does not have,
// listing those it has.
func (s *session) unknownService(svc string) error {
	names, err := s.services()
	if err != nil {
		return fmt.Errorf("the server at %s has no service %q (and listing its services failed: %v)", s.addr, svc, err)
	}
	if len(names) == 0 {
		return fmt.Errorf("the server at %s has no service %q: it lists none", s.addr, svc)
	}
	list := strings.Join(names, ", ")
	if len(names) > maxListed {
		list = fmt.Sprintf("%s and %d more", strings.Join(names[:maxListed], ", "), len(names)-maxListed)
	}
	return fmt.Errorf("the server at %s has no service %q; its services: %s", s.addr, svc, list)
}

// serviceOf returns the service of "pkg.Service/Method" or
// "pkg.Service.Method" (a leading "/" allowed, as message.Set.Method
// allows it).
func serviceOf(method string) (string, error) {
	full := strings.TrimPrefix(method, "/")
	svc, meth, ok := strings.Cut(full, "/")
	if !ok {
		i := strings.LastIndexByte(full, '.')
		if i < 0 {
			return "", fmt.Errorf("method %q: want pkg.Service/Method or pkg.Service.Method", method)
		}
		svc, meth = full[:i], full[i+1:]
	}
	if svc == "" || meth == "" || strings.Contains(meth, "/") {
		return "", fmt.Errorf("method %q: want pkg.Service/Method or pkg.Service.Method", method)
	}
	return svc, nil
}

// resolver gathers the file descriptors of one Resolve.
type resolver struct {
	s     *session
	files map[string]*descriptorpb.FileDescriptorProto // by name
	order []*descriptorpb.FileDescriptorProto          // as received
	from  map[string]string                            // a missing file's name → a file importing it
}

// fail is an error of the server's reflection, naming its address.
func (r *resolver) fail(format string, args ...any) error {
	return fmt.Errorf("reflection at %s: %s", r.s.addr, fmt.Sprintf(format, args...))
}

// take keeps the files of a file descriptor response, those not already
// held, within the bounds.
func (r *resolver) take(resp *rpb.ServerReflectionResponse) error {
	fdr := resp.GetFileDescriptorResponse()
	if fdr == nil || len(fdr.GetFileDescriptorProto()) == 0 {
		return r.fail("the server answered a request for files with no file")
	}
	for _, b := range fdr.GetFileDescriptorProto() {
		if len(b) > MaxFileSize {
			return r.fail("a file descriptor of %d bytes, over the bound of %d", len(b), MaxFileSize)
		}
		fd := new(descriptorpb.FileDescriptorProto)
		if err := proto.Unmarshal(b, fd); err != nil {
			return r.fail("a file descriptor does not decode: %v", err)
		}
		if err := r.add(fd); err != nil {
			return err
		}
	}
	return nil
}

// add keeps fd unless a file of its name is held already.
func (r *resolver) add(fd *descriptorpb.FileDescriptorProto) error {
	name := fd.GetName()
	if name == "" {
		return r.fail("a file descriptor without a name")
	}
	if _, ok := r.files[name]; ok {
		return nil
	}
	if len(r.files) == MaxFiles {
		return r.fail("more than %d files, the bound", MaxFiles)
	}
	r.files[name] = fd
	r.order = append(r.order, fd)
	return nil
}

// closeImports asks for each file imported and not held, by name, until
// every import is held.
func (r *resolver) closeImports() error {
	r.from = map[string]string{}
	for {
		missing := r.missing()
		if len(missing) == 0 {
			return nil
		}
		for _, name := range missing {
			if _, ok := r.files[name]; ok {
				continue // sent along with an earlier one
			}
			if err := r.fetch(name); err != nil {
				return err
			}
		}
	}
}

// missing lists the files imported and not held, sorted, remembering a file
// that imports each.
func (r *resolver) missing() []string {
	var names []string
	for _, fd := range r.order {
		for _, dep := range fd.GetDependency() {
			if _, ok := r.files[dep]; ok {
				continue
			}
			if _, ok := r.from[dep]; !ok {
				r.from[dep] = fd.GetName()
			}
			if !slices.Contains(names, dep) {
				names = append(names, dep)
			}
		}
	}
	slices.Sort(names)
	return names
}

// fetch asks the server for the file called name; a well-known one it does
// not have is taken from the binary's own descriptors.
func (r *resolver) fetch(name string) error {
	resp, err := r.s.ask(&rpb.ServerReflectionRequest{
		MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: name},
	})
	if err == nil {
		return r.take(resp)
	}
	var se *serverError
	if !errors.As(err, &se) {
		return err
	}
	if se.code == codes.NotFound && strings.HasPrefix(name, wellKnownPrefix) {
		if fd, gerr := protoregistry.GlobalFiles.FindFileByPath(name); gerr == nil {
			return r.add(protodesc.ToFileDescriptorProto(fd))
		}
	}
	return r.fail("the file %s, imported by %s: %v", name, r.from[name], err)
}
