package httpquick

import (
	"fmt"
	"strings"

	httpdrv "github.com/benchrig/benchrig/internal/protocol/http/driver"
	"github.com/benchrig/benchrig/internal/quick"
)

// Wire are benchrig http's TLS and HTTP/2 options.
type Wire struct {
	// Insecure, CACert, Cert, Key and ServerName configure https://
	// (curl's -k, --cacert, --cert, --key; SNI).
	Insecure   bool
	CACert     string
	Cert       string
	Key        string
	ServerName string
	// HTTP2 speaks HTTP/2 over TLS (ALPN h2); H2C cleartext HTTP/2 with
	// prior knowledge to an http:// URL.
	HTTP2 bool
	H2C   bool
	// Streams is HTTP/2's concurrent streams per connection (h2load's
	// -m): the suite's pipeline for an HTTP/2 path. 0: not given.
	Streams int
}

// wireDoc adds the TLS and HTTP/2 options to the path and, for
// --streams, the matrix's pipeline.
func (h *Quick) wireDoc(path, d quick.Doc, rawURL string) error {
	w := &h.Wire
	scheme, _, _ := strings.Cut(rawURL, "://")
	switch {
	case w.HTTP2 && w.H2C:
		return fmt.Errorf("give --http2 (HTTP/2 over TLS, https://) or --h2c (cleartext, http://), not both")
	case w.HTTP2 && scheme != "https":
		return fmt.Errorf("--http2 is HTTP/2 over TLS: it takes an https:// URL; cleartext HTTP/2 is --h2c or an h2c:// URL")
	case w.H2C && scheme == "https":
		return fmt.Errorf("--h2c is cleartext HTTP/2: it takes an http:// URL; over TLS use --http2")
	}
	tls := quick.Doc{}
	if w.Insecure {
		tls["insecure"] = true
	}
	for _, kv := range []struct{ k, v, flag string }{{"cacert", w.CACert, "--cacert"}, {"cert", w.Cert, "--cert"}, {"key", w.Key, "--key"}, {"server_name", w.ServerName, "--servername"}} {
		if kv.v != "" {
			if scheme != "https" {
				return fmt.Errorf("%s is for https:// URLs, got %s://", kv.flag, scheme)
			}
			tls[kv.k] = kv.v
		}
	}
	if w.Insecure && scheme != "https" {
		return fmt.Errorf("--insecure is for https:// URLs, got %s://", scheme)
	}
	if (w.Cert == "") != (w.Key == "") {
		return fmt.Errorf("--cert and --key, a PEM client certificate and its private key, go together: give both or neither")
	}
	if len(tls) > 0 {
		path["tls"] = tls
	}
	if w.HTTP2 {
		path["http2"] = true
	}
	if w.H2C {
		path["h2c"] = true
	}
	if h.Changed("streams") {
		h2 := w.HTTP2 || w.H2C || scheme == "h2c"
		switch {
		case !h2:
			return fmt.Errorf("--streams is HTTP/2's concurrent streams per connection: add --http2 (https://) or --h2c, or use an h2c:// URL (HTTP/1.1 pipelining is --pipeline)")
		case h.Changed("pipeline"):
			return fmt.Errorf("give --streams or --pipeline, not both: for HTTP/2 they are the same (streams in flight per connection)")
		case w.Streams < 1 || w.Streams > httpdrv.MaxPipeline:
			return fmt.Errorf("--streams must be 1–%d, got %d", httpdrv.MaxPipeline, w.Streams)
		}
		d["matrix"].(quick.Doc)["pipeline"] = []int{w.Streams}
	}
	return nil
}
