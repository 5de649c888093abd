package grpcephemeral

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// ProtoFile is the name of the embedded .proto file, as WriteProto writes it
// and as descriptors (and server reflection) name it.
const ProtoFile = "greeter.proto"

// ServiceName is the full name of the service served.
const ServiceName = "benchrig.test.v1.Greeter"

//go:embed greeter.proto
var protoText string

// Proto returns the text of the embedded greeter.proto.
func Proto() string { return protoText }

// WriteProto writes the embedded greeter.proto into dir as greeter.proto (for
// clients that parse .proto files, such as ghz) and returns its path.
func WriteProto(dir string) (string, error) {
	path := filepath.Join(dir, ProtoFile)
	if err := os.WriteFile(path, []byte(protoText), 0o644); err != nil {
		return "", fmt.Errorf("grpcephemeral: write %s: %w", ProtoFile, err)
	}
	return path, nil
}

// compiled is greeter.proto compiled once per process.
var compiled = sync.OnceValues(func() (protoreflect.FileDescriptor, error) {
	c := protocompile.Compiler{
		Resolver: &protocompile.SourceResolver{
			Accessor: protocompile.SourceAccessorFromMap(map[string]string{ProtoFile: protoText}),
		},
		// Comments kept: server reflection then shows them.
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	files, err := c.Compile(context.Background(), ProtoFile)
	if err != nil {
		return nil, fmt.Errorf("grpcephemeral: compile %s: %w", ProtoFile, err)
	}
	return files[0], nil
})

// ServiceDescriptor returns the compiled descriptor of the Greeter service,
// for clients in tests that build dynamicpb messages.
func ServiceDescriptor() (protoreflect.ServiceDescriptor, error) {
	fd, err := compiled()
	if err != nil {
		return nil, err
	}
	sd := fd.Services().ByName(protoreflect.FullName(ServiceName).Name())
	if sd == nil {
		return nil, fmt.Errorf("grpcephemeral: %s declares no service %s", ProtoFile, ServiceName)
	}
	return sd, nil
}

// descriptorResolver finds greeter.proto's descriptors first, then those
// linked into the binary (the reflection service's own, for clients that
// describe it): what server reflection answers from.
type descriptorResolver struct {
	own *protoregistry.Files
}

var _ protodesc.Resolver = descriptorResolver{}

// newDescriptorResolver registers fd in a registry of its own.
func newDescriptorResolver(fd protoreflect.FileDescriptor) (descriptorResolver, error) {
	var files protoregistry.Files
	if err := files.RegisterFile(fd); err != nil {
		return descriptorResolver{}, fmt.Errorf("grpcephemeral: register %s: %w", fd.Path(), err)
	}
	return descriptorResolver{own: &files}, nil
}

// FindFileByPath implements protodesc.Resolver.
func (r descriptorResolver) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	if fd, err := r.own.FindFileByPath(path); err == nil {
		return fd, nil
	}
	return protoregistry.GlobalFiles.FindFileByPath(path)
}

// FindDescriptorByName implements protodesc.Resolver.
func (r descriptorResolver) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	if d, err := r.own.FindDescriptorByName(name); err == nil {
		return d, nil
	}
	return protoregistry.GlobalFiles.FindDescriptorByName(name)
}
