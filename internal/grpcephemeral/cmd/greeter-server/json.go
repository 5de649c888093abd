package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/benchrig/benchrig/internal/grpcephemeral"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The same operation as JSON over HTTP/1.1 (-json): SayHello at its gRPC
// method path, the request and the reply in gRPC's JSON mapping
// (protojson), so that a suite can set the two side by side.

// jsonPath is the one path served: the gRPC method's.
const jsonPath = "/" + grpcephemeral.ServiceName + "/SayHello"

// maxJSONBody bounds a request's body (gRPC's default message limit is
// 4 MiB; a HelloRequest is a few bytes).
const maxJSONBody = 1 << 20

// jsonServer answers POST /benchrig.test.v1.Greeter/SayHello with a JSON
// HelloRequest ({"name":"x","id":1}; id as a number or a string, as
// protojson reads int64) with {"message":"hello x","id":"1"} (int64 as a
// string, as protojson writes it).
type jsonServer struct {
	in       protoreflect.MessageDescriptor // HelloRequest
	name, id protoreflect.FieldDescriptor
	calls    atomic.Int64 // requests to jsonPath with method POST
	messages atomic.Int64 // of those, the requests decoded
}

// newJSONServer compiles greeter.proto (embedded) for HelloRequest.
func newJSONServer() (*jsonServer, error) {
	sd, err := grpcephemeral.ServiceDescriptor()
	if err != nil {
		return nil, err
	}
	md := sd.Methods().ByName("SayHello")
	if md == nil {
		return nil, fmt.Errorf("%s: no method SayHello", grpcephemeral.ProtoFile)
	}
	in := md.Input()
	j := &jsonServer{in: in, name: in.Fields().ByName("name"), id: in.Fields().ByName("id")}
	if j.name == nil || j.id == nil {
		return nil, fmt.Errorf("%s: %s lacks the field name or id", grpcephemeral.ProtoFile, in.FullName())
	}
	return j, nil
}

// helloReply is HelloReply in gRPC's JSON mapping.
type helloReply struct {
	Message string `json:"message"`
	ID      string `json:"id"` // int64: a string
}

func (j *jsonServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != jsonPath {
		http.Error(w, fmt.Sprintf("no method at %q; served: POST %s", r.URL.Path, jsonPath), http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, fmt.Sprintf("method %s: %s takes POST", r.Method, jsonPath), http.StatusMethodNotAllowed)
		return
	}
	j.calls.Add(1)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err != nil {
		if mbe := new(http.MaxBytesError); errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("body: more than %d bytes", maxJSONBody), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
		return
	}
	req := dynamicpb.NewMessage(j.in)
	if err := protojson.Unmarshal(body, req); err != nil {
		http.Error(w, fmt.Sprintf("body: not a JSON %s: %v", j.in.FullName(), err), http.StatusBadRequest)
		return
	}
	j.messages.Add(1)
	// Written as protojson writes it: <, > and & as they are, no
	// whitespace.
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(helloReply{
		Message: "hello " + req.Get(j.name).String(),
		ID:      strconv.FormatInt(req.Get(j.id).Int(), 10),
	}); err != nil { // a string and a number: cannot fail
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(bytes.TrimSuffix(out.Bytes(), []byte("\n")))
}
