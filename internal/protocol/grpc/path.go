package grpc

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/benchrig/benchrig/internal/protocol/grpc/message"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/suite"
)

// Path is a gRPC path of a suite (paths.NAME.grpc): one unary method,
// its request message and what answer counts as success.
type Path struct {
	// Call is the method: pkg.Service/Method (or pkg.Service.Method).
	Call string `json:"call"`
	// Proto lists the .proto files describing it (relative to the working
	// directory); ImportPaths where their imports are found (protoc's -I;
	// default each file's directory).
	Proto       []string `json:"proto,omitempty"`
	ImportPaths []string `json:"import_paths,omitempty"`
	// Reflection describes the method from the server's reflection
	// service instead of .proto files.
	Reflection bool `json:"reflection,omitempty"`
	// Compression is gzip (request messages compressed, compressed
	// answers accepted) or identity (the default).
	Compression string `json:"compression,omitempty"`
	// Data is the request message as JSON (protojson): {id} stands for a
	// key of the cell's workload, as the whole value of a top-level
	// integer field or inside a top-level string field. DataFile is a file
	// of length-prefixed binary messages sent in turn instead.
	Data     string `json:"data,omitempty"`
	DataFile string `json:"data_file,omitempty"`
	// Metadata are request headers sent with every call.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Deadline is sent with each call as grpc-timeout (default none).
	Deadline *suite.Duration `json:"deadline,omitempty"`
	// Timeout bounds each call on the client (default 10s; 0s: none).
	Timeout *suite.Duration `json:"timeout,omitempty"`
	// TLS speaks gRPC over TLS (ALPN h2); without it cleartext HTTP/2.
	TLS *TLS `json:"tls,omitempty"`
	// Authority is the :authority sent (default the target's address).
	Authority string `json:"authority,omitempty"`
	// Expect is the answer that counts as success (default: status OK).
	Expect *Expect `json:"expect,omitempty"`
	// StreamMessages is the request messages of each call of a
	// client-streaming or bidirectional method (default 1), all sent
	// before the call's stream is half-closed.
	StreamMessages int `json:"stream_messages,omitempty"`
}

// TLS is how a gRPC path's connections are made over TLS.
type TLS struct {
	// Insecure skips the verification of the server's certificate.
	Insecure bool `json:"insecure,omitempty"`
	// CACert is a PEM file of the authorities to trust; Cert and Key a
	// client certificate and its key (both or neither).
	CACert string `json:"cacert,omitempty"`
	Cert   string `json:"cert,omitempty"`
	Key    string `json:"key,omitempty"`
	// ServerName is the SNI name and the name the certificate must carry.
	ServerName string `json:"server_name,omitempty"`
}

// Expect is the answer a call must get.
type Expect struct {
	// Status is the grpc-status that counts as success: a code name (OK,
	// NOT_FOUND, …) or number (default OK).
	Status string `json:"status,omitempty"`
	// MessageContains must occur in the response message's JSON.
	MessageContains string `json:"message_contains,omitempty"`
	// JSONEqual is the response message (a JSON object, or a string of
	// JSON) the response must equal, compared as messages.
	JSONEqual any `json:"json_equal,omitempty"`
	// Messages is the number of messages a server-streaming or
	// bidirectional call must answer (0: any).
	Messages int `json:"messages,omitempty"`
}

// jsonText is JSONEqual as JSON text ("" when unset).
func (e *Expect) jsonText() (string, error) {
	switch v := e.JSONEqual.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		b, err := json.Marshal(v)
		return string(b), err
	}
}

// Bounds of a gRPC path.
const (
	maxProtoFiles = 256
	maxData       = 4 << 20
	maxMetadata   = 64
	// maxStreamMessages is the driver's bound (grpc.MaxStreamMessages).
	maxStreamMessages = 1 << 20
)

var callRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*[/.][A-Za-z_][A-Za-z0-9_]*$`)

// Defaults: nothing to fill (the driver's defaults apply).
func (g *Path) Defaults(suite.Field) {}

// Validate checks the section.
func (g *Path) Validate(at suite.Field) {
	switch {
	case g.Call == "":
		at.Child("call").Errf("required: the method, e.g. helloworld.Greeter/SayHello")
	case !callRE.MatchString(g.Call):
		at.Child("call").Errf("%q is not a method name; accepted: pkg.Service/Method or pkg.Service.Method", g.Call)
	}
	switch {
	case len(g.Proto) == 0 && !g.Reflection:
		at.Child("proto").Errf("required: the .proto files that describe %s (or reflection: true, to ask the server)", g.Call)
	case len(g.Proto) > 0 && g.Reflection:
		at.Child("reflection").Errf("proto and reflection are exclusive: .proto files, or the server's reflection service")
	case len(g.Proto) > maxProtoFiles:
		at.Child("proto").Errf("at most %d files, got %d", maxProtoFiles, len(g.Proto))
	}
	at.Child("compression").CheckOneOf(g.Compression, "", "identity", "gzip")
	if g.Data != "" && g.DataFile != "" {
		at.Child("data_file").Errf("data and data_file are exclusive: a JSON message, or a file of binary ones")
	}
	if len(g.Data) > maxData {
		at.Child("data").Errf("%d bytes, at most %d (4 MiB)", len(g.Data), maxData)
	}
	if len(g.Metadata) > maxMetadata {
		at.Child("metadata").Errf("at most %d entries, got %d", maxMetadata, len(g.Metadata))
	}
	at.Child("metadata").CheckHeaders(g.Metadata)
	at.Child("timeout").CheckTimeout(g.Timeout)
	if g.Deadline != nil && g.Deadline.D() <= 0 {
		at.Child("deadline").Errf("must be > 0 (leave it out for no deadline), got %s", g.Deadline.D())
	}
	if g.StreamMessages < 0 || g.StreamMessages > maxStreamMessages {
		at.Child("stream_messages").Errf("want 1–%d request messages per call (0: 1), got %d", maxStreamMessages, g.StreamMessages)
	}
	if e := g.Expect; e != nil && (e.Messages < 0 || e.Messages > maxStreamMessages) {
		at.Child("expect").Child("messages").Errf("want 0–%d response messages per call (0: any), got %d", maxStreamMessages, e.Messages)
	}
	if t := g.TLS; t != nil && (t.Cert == "") != (t.Key == "") {
		at.Child("tls").Errf("cert and key go together: give both (a PEM client certificate and its private key) or neither")
	}
	if e := g.Expect; e != nil {
		if e.Status != "" {
			if _, err := message.ParseCode(e.Status); err != nil {
				at.Child("expect").Child("status").Errf("%v", err)
			}
		}
		switch v := e.JSONEqual.(type) {
		case nil, string, map[string]any:
		default:
			at.Child("expect").Child("json_equal").Errf("want a JSON object (or a string of JSON), got %T", v)
		}
	}
}

// PacesStreams implements suite.StreamPacer: at a rate a connection
// carries up to pipeline calls at once, on its HTTP/2 streams.
func (g *Path) PacesStreams() bool { return true }

// BatchProblem: a call carries one key.
func (g *Path) BatchProblem(path string, b int) string {
	return fmt.Sprintf("batch %d with grpc path %q: a unary call carries one message; accepted: 1", b, path)
}

// Redacted hides the values of secret metadata (authorization, …).
func (g *Path) Redacted(p secret.Policy, found *secret.Set) suite.PathSpec {
	c := *g
	c.Metadata = p.Headers(g.Metadata, found)
	return &c
}
