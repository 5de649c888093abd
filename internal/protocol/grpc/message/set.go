// Package message holds what benchrig's gRPC protocol needs of protobuf,
// without any network: the .proto files parsed in-process (Load) or taken
// from server reflection (FromDescriptors), a method found by name, the
// request messages built once from JSON and patched per key without
// allocation (Template), files of length-prefixed binary messages
// (ReadMessages), a response body's messages walked (Split), a response
// compared with an expectation (Expect), and the gRPC status, message and
// timeout headers' texts (CodeName, ParseCode, DecodeMessage, Timeout).
//
// A gRPC message on the wire is a 5-byte prefix (a compressed flag, 0 or 1,
// and a 4-byte big-endian length) followed by that many bytes of protobuf.
package message

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Set is a parsed set of .proto files: their services' methods and every
// type they declare or import.
type Set struct {
	files    []protoreflect.FileDescriptor
	types    *dynamicpb.Types
	methods  map[string]*Method   // by "pkg.Service/Method"
	services map[string][]*Method // by "pkg.Service", in declaration order
	names    []string             // the methods' names, sorted
}

// Method is a method of a service of a Set.
type Method struct {
	// Desc is the method's descriptor.
	Desc protoreflect.MethodDescriptor
	// Path is the HTTP/2 :path of a call, "/pkg.Service/Method".
	Path string
	// Name is "pkg.Service/Method".
	Name string

	// types resolves the messages an Any names (nil: protobuf's global
	// registry).
	types *dynamicpb.Types
}

// ClientStreaming reports whether the client sends a stream of messages.
func (m *Method) ClientStreaming() bool { return m.Desc.IsStreamingClient() }

// ServerStreaming reports whether the server answers with a stream of
// messages.
func (m *Method) ServerStreaming() bool { return m.Desc.IsStreamingServer() }

// FromDescriptors makes a Set from already-resolved file descriptors (as
// server reflection gives them). The files' imports are taken in too, so
// that every type a message refers to is known.
func FromDescriptors(files []protoreflect.FileDescriptor) (*Set, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("no file descriptor given")
	}
	for i, fd := range files {
		if fd == nil {
			return nil, fmt.Errorf("file descriptor %d is nil", i+1)
		}
		if fd.IsPlaceholder() {
			return nil, fmt.Errorf("file descriptor %s is a placeholder (not resolved)", fd.Path())
		}
	}
	reg, all, err := closure(files)
	if err != nil {
		return nil, err
	}
	s := &Set{
		files:    slices.Clone(files),
		types:    dynamicpb.NewTypes(reg),
		methods:  map[string]*Method{},
		services: map[string][]*Method{},
	}
	for _, fd := range all {
		svcs := fd.Services()
		for i := range svcs.Len() {
			sd := svcs.Get(i)
			svc := string(sd.FullName())
			s.services[svc] = []*Method{}
			mds := sd.Methods()
			for j := range mds.Len() {
				md := mds.Get(j)
				name := svc + "/" + string(md.Name())
				m := &Method{Desc: md, Path: "/" + name, Name: name, types: s.types}
				s.methods[name] = m
				s.services[svc] = append(s.services[svc], m)
				s.names = append(s.names, name)
			}
		}
	}
	slices.Sort(s.names)
	return s, nil
}

// closure registers files and everything they import, returning the
// registry and the files in the order registered (imports first).
func closure(files []protoreflect.FileDescriptor) (*protoregistry.Files, []protoreflect.FileDescriptor, error) {
	reg := new(protoregistry.Files)
	seen := map[string]protoreflect.FileDescriptor{}
	var all []protoreflect.FileDescriptor
	var add func(fd protoreflect.FileDescriptor) error
	add = func(fd protoreflect.FileDescriptor) error {
		if prev, ok := seen[fd.Path()]; ok {
			if prev != fd && prev.Package() != fd.Package() {
				return fmt.Errorf("two files named %s (packages %s and %s)", fd.Path(), prev.Package(), fd.Package())
			}
			return nil
		}
		seen[fd.Path()] = fd
		imports := fd.Imports()
		for i := range imports.Len() {
			imp := imports.Get(i)
			if imp.FileDescriptor == nil || imp.IsPlaceholder() {
				return fmt.Errorf("%s: its import %s is not resolved", fd.Path(), imp.Path())
			}
			if err := add(imp.FileDescriptor); err != nil {
				return err
			}
		}
		if err := reg.RegisterFile(fd); err != nil {
			return fmt.Errorf("%s: %v", fd.Path(), err)
		}
		all = append(all, fd)
		return nil
	}
	for _, fd := range files {
		if err := add(fd); err != nil {
			return nil, nil, err
		}
	}
	return reg, all, nil
}

// Files returns the files the Set was made of (not their imports).
func (s *Set) Files() []protoreflect.FileDescriptor { return slices.Clone(s.files) }

// Message finds a message type of the Set (or of its imports) by its full
// name, "pkg.Type".
func (s *Set) Message(name string) (protoreflect.MessageDescriptor, error) {
	mt, err := s.types.FindMessageByName(protoreflect.FullName(name))
	if err != nil {
		return nil, fmt.Errorf("unknown message type %q", name)
	}
	return mt.Descriptor(), nil
}

// Methods lists "pkg.Service/Method" of every method, sorted.
func (s *Set) Methods() []string { return slices.Clone(s.names) }

// maxListed is how many names an error about an unknown one lists.
const maxListed = 20

// listNames joins at most maxListed names, then says how many more there
// are.
func listNames(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxListed], ", "), len(names)-maxListed)
}

// Method finds a method by "pkg.Service/Method" or "pkg.Service.Method"
// (ghz accepts both; a leading "/", as in the HTTP/2 :path, is allowed too).
// An unknown service or method is an error that names it and lists the
// known ones.
func (s *Set) Method(name string) (*Method, error) {
	full := strings.TrimPrefix(name, "/")
	svc, meth, ok := strings.Cut(full, "/")
	if !ok {
		i := strings.LastIndexByte(full, '.')
		if i < 0 {
			return nil, fmt.Errorf("method %q: want pkg.Service/Method or pkg.Service.Method", name)
		}
		svc, meth = full[:i], full[i+1:]
	}
	if svc == "" || meth == "" || strings.Contains(meth, "/") {
		return nil, fmt.Errorf("method %q: want pkg.Service/Method or pkg.Service.Method", name)
	}
	methods, ok := s.services[svc]
	if !ok {
		if len(s.services) == 0 {
			return nil, fmt.Errorf("unknown service %q: the .proto files declare no service", svc)
		}
		known := make([]string, 0, len(s.services))
		for k := range s.services {
			known = append(known, k)
		}
		slices.Sort(known)
		return nil, fmt.Errorf("unknown service %q; known services: %s", svc, listNames(known))
	}
	if m, ok := s.methods[svc+"/"+meth]; ok {
		return m, nil
	}
	if len(methods) == 0 {
		return nil, fmt.Errorf("service %s has no method %q: it declares none", svc, meth)
	}
	known := make([]string, len(methods))
	for i, m := range methods {
		known[i] = string(m.Desc.Name())
	}
	slices.Sort(known)
	return nil, fmt.Errorf("service %s has no method %q; its methods: %s", svc, meth, listNames(known))
}

// typesOf returns the types of md's file and of everything it imports,
// which resolve the messages an Any names.
func typesOf(md protoreflect.Descriptor) *dynamicpb.Types {
	if fd := md.ParentFile(); fd != nil {
		if reg, _, err := closure([]protoreflect.FileDescriptor{fd}); err == nil {
			return dynamicpb.NewTypes(reg)
		}
	}
	return dynamicpb.NewTypes(new(protoregistry.Files))
}
