package grpc

import (
	"fmt"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/protocol/grpc/message"
	http "github.com/benchrig/benchrig/internal/protocol/http/driver"
	"github.com/benchrig/benchrig/internal/workload"
)

// Config describes the unary call every stream makes. Plain data: it is
// recorded in results files (Redacted first).
type Config struct {
	// Addr is the server's host:port.
	Addr string `json:"addr"`
	// TLS speaks gRPC over TLS (ALPN h2); nil: cleartext HTTP/2 (h2c,
	// prior knowledge), as ghz's --insecure.
	TLS *http.TLSConfig `json:"tls,omitempty"`
	// Authority is the :authority sent (default Addr).
	Authority string `json:"authority,omitempty"`
	// Call is the method, "pkg.Service/Method" (or "pkg.Service.Method").
	Call string `json:"call"`
	// Proto lists the .proto files describing it; ImportPaths where their
	// imports are found (protoc's -I). Reflection, instead, asks the
	// server's reflection service (set-up only, grpc-go's client).
	Proto       []string `json:"proto,omitempty"`
	ImportPaths []string `json:"import_paths,omitempty"`
	Reflection  bool     `json:"reflection,omitempty"`
	// Compression is "gzip" to send compressed request messages and
	// accept compressed answers; "" (or "identity") sends them as they are.
	Compression string `json:"compression,omitempty"`
	// RequestBytes is, for the record, the bytes of one call's request
	// messages as sent (prefixes included, compressed with gzip; the key
	// 1 message's for a template with {id}); filled by New.
	RequestBytes int `json:"request_bytes,omitempty"`
	// Data is the request message as JSON; {id} stands for the key of
	// the request's workload (a top-level integer field's whole value, or
	// inside a top-level string). DataFile, instead, is a file of
	// length-prefixed binary messages, sent in turn.
	Data     string `json:"data,omitempty"`
	DataFile string `json:"data_file,omitempty"`
	// Metadata are request headers (names lower-cased); binary ones end
	// in -bin and carry base64.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Deadline is each call's deadline, sent as grpc-timeout (0: none).
	Deadline time.Duration `json:"deadline,omitempty"`
	// Timeout bounds each call from send to trailers on the client (0:
	// none); DialTimeout each connect.
	Timeout     time.Duration `json:"timeout"`
	DialTimeout time.Duration `json:"dial_timeout"`
	// ExpectStatus is the status that counts as success (a code name or
	// number; default OK); ExpectContains a text the response's JSON
	// must hold, ExpectJSON the response it must equal (as messages).
	ExpectStatus   string `json:"expect_status,omitempty"`
	ExpectContains string `json:"expect_message_contains,omitempty"`
	ExpectJSON     string `json:"expect_json_equal,omitempty"`
	// StreamMessages is the request messages of each call of a
	// client-streaming or bidirectional method (default 1), all sent
	// before the stream is half-closed; ExpectMessages the response
	// messages a server-streaming or bidirectional call must get (0: any).
	StreamMessages int `json:"stream_messages,omitempty"`
	ExpectMessages int `json:"expect_messages,omitempty"`
	// Workload derives each call's key ({id}) from its sequence number.
	Workload workload.Config `json:"workload"`
	// Negotiated is what the connections settled, filled in after a
	// sample for the record.
	Negotiated *http.Negotiated `json:"negotiated,omitempty"`
}

// Bounds of a Config.
const (
	// MaxMessages bounds the messages of a DataFile.
	MaxMessages = 1 << 20
	// MaxMetadata bounds the metadata entries.
	MaxMetadata = 64
	// MaxStreamMessages bounds Config.StreamMessages and ExpectMessages.
	MaxStreamMessages = 1 << 20
)

// DefaultConfig: 10 s call timeout, 5 s dial timeout, no deadline sent.
func DefaultConfig() Config {
	return Config{Timeout: 10 * time.Second, DialTimeout: 5 * time.Second}
}

// Redacted returns the config with secret metadata values hidden (the
// names kept), for recording; the driver sends the real ones.
func (c Config) Redacted() Config {
	if len(c.Metadata) > 0 {
		md := make(map[string]string, len(c.Metadata))
		for k, v := range c.Metadata {
			if http.IsSecretHeader(k) {
				v = "[REDACTED]"
			}
			md[k] = v
		}
		c.Metadata = md
	}
	return c
}

// reserved are the headers gRPC itself sends: metadata may not set them.
var reserved = map[string]bool{"content-type": true, "te": true, "grpc-timeout": true, "grpc-encoding": true,
	"grpc-accept-encoding": true, "user-agent": true, "host": true, "content-length": true, "connection": true}

// check checks the config's own fields (the .proto files are read by New).
func (c *Config) check() error {
	switch {
	case c.Addr == "":
		return fmt.Errorf("addr: required, the server's host:port")
	case c.Call == "":
		return fmt.Errorf("call: required, the method as pkg.Service/Method")
	case len(c.Proto) > 0 && c.Reflection:
		return fmt.Errorf("proto and reflection are exclusive: describe the method by .proto files or ask the server")
	case c.Compression != "" && c.Compression != "identity" && c.Compression != "gzip":
		return fmt.Errorf("compression %q: accepted: gzip, identity (or none)", c.Compression)
	case c.Data != "" && c.DataFile != "":
		return fmt.Errorf("data and data_file are exclusive: a JSON message, or a file of binary ones")
	case c.Deadline < 0 || c.Timeout < 0 || c.DialTimeout < 0:
		return fmt.Errorf("deadline, timeout and dial_timeout must be ≥ 0")
	case c.StreamMessages < 0 || c.StreamMessages > MaxStreamMessages:
		return fmt.Errorf("stream_messages: want 1–%d messages per call (0: 1), got %d", MaxStreamMessages, c.StreamMessages)
	case c.ExpectMessages < 0 || c.ExpectMessages > MaxStreamMessages:
		return fmt.Errorf("expect messages: want 0–%d (0: any), got %d", MaxStreamMessages, c.ExpectMessages)
	case len(c.Metadata) > MaxMetadata:
		return fmt.Errorf("metadata: at most %d entries, got %d", MaxMetadata, len(c.Metadata))
	}
	for k, v := range c.Metadata {
		lk := strings.ToLower(k)
		switch {
		case k == "" || strings.HasPrefix(k, ":"):
			return fmt.Errorf("metadata %q: want a header name (letters, digits, - _ .)", k)
		case reserved[lk]:
			return fmt.Errorf("metadata %q: set by gRPC itself; accepted: any other name", k)
		case strings.ContainsAny(k+v, "\r\n"):
			return fmt.Errorf("metadata %q: line breaks are not allowed in names or values", k)
		}
	}
	if c.ExpectStatus != "" {
		if _, err := message.ParseCode(c.ExpectStatus); err != nil {
			return fmt.Errorf("expect status: %w", err)
		}
	}
	return nil
}
