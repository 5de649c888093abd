package http

import (
	"fmt"
	"strings"

	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/suite"
)

// Path is an HTTP path of a suite (paths.NAME.http).
type Path struct {
	// URL to request; {port} is the target's port and {id} a key of the
	// cell's workload, if any.
	URL string `json:"url"`
	// Method (default GET).
	Method string `json:"method,omitempty"`
	// Headers sent with every request.
	Headers map[string]string `json:"headers,omitempty"`
	// Body sent with every request.
	Body string `json:"body,omitempty"`
	// ExpectStatus is the status of an accepted response (default 200; 0
	// accepts any 2xx); others count as unexpected.
	ExpectStatus int `json:"expect_status"`
	// ExpectBody, when set, must equal the response body.
	ExpectBody string `json:"expect_body,omitempty"`
	// ExpectBodyContains, when set, must occur in the response body.
	ExpectBodyContains string `json:"expect_body_contains,omitempty"`
	// Timeout bounds each request (default 10s; 0s: none).
	Timeout *suite.Duration `json:"timeout,omitempty"`
	// Requests are several requests sent instead of one (vegeta's targets):
	// cycled in order, each Weight times in a row, or picked at random
	// (Order: random, seeded by the sample's seed). All go to the host:port
	// of URL. Headers apply to each; a request's own header wins.
	Requests []Request `json:"requests,omitempty"`
	// RequestsFile is a request file in vegeta's targets format (METHOD URL,
	// header lines, @body-file; `weight=N` after the URL), read when the run
	// starts; relative to the working directory.
	RequestsFile string `json:"requests_file,omitempty"`
	// Order is cycle (default) or random.
	Order string `json:"order,omitempty"`
	// RetryUnsafe re-sends a non-idempotent request (POST, PATCH) once on a
	// connection the server closed before any byte of its response, as
	// idempotent ones always are.
	RetryUnsafe bool `json:"retry_unsafe,omitempty"`
	// TLS configures the connections to an https:// URL: trust, client
	// certificate, SNI name.
	TLS *TLS `json:"tls,omitempty"`
	// HTTP2 speaks HTTP/2 over TLS (ALPN h2) to an https:// URL; the
	// cell's pipeline is then the concurrent streams per connection
	// (h2load's -m). Without it, an https:// server that offers only h2
	// is spoken to in HTTP/2 too.
	HTTP2 bool `json:"http2,omitempty"`
	// H2C speaks cleartext HTTP/2 with prior knowledge to an http:// URL,
	// as an h2c:// URL does.
	H2C bool `json:"h2c,omitempty"`
}

// TLS is how an https:// path's connections are made.
type TLS struct {
	// Insecure skips the verification of the server's certificate.
	Insecure bool `json:"insecure,omitempty"`
	// CACert is a PEM file of the authorities to trust instead of the
	// system's; Cert and Key a client certificate and its key (both or
	// neither). Files are relative to the working directory.
	CACert string `json:"cacert,omitempty"`
	Cert   string `json:"cert,omitempty"`
	Key    string `json:"key,omitempty"`
	// ServerName is the SNI name, and the name the certificate must
	// carry (default: the URL's host).
	ServerName string `json:"server_name,omitempty"`
}

// Request is one of a path's several requests.
type Request struct {
	Method  string            `json:"method,omitempty"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	// Weight is the request's share (1–1000000; default 1).
	Weight int `json:"weight,omitempty"`
}

// maxRequests bounds a path's requests (the driver's own bound).
const maxRequests = 1 << 20

// Defaults fills GET and status 200.
func (h *Path) Defaults(at suite.Field) {
	if h.Method == "" {
		h.Method = "GET"
	}
	if !at.Child("expect_status").Present() {
		h.ExpectStatus = 200
	}
}

// Validate checks the section.
func (h *Path) Validate(at suite.Field) {
	if h.URL == "" {
		at.Child("url").Errf("required: the URL to request, e.g. http://127.0.0.1:{port}/")
	} else {
		at.Child("url").CheckURL(h.URL)
		at.Child("url").CheckTemplate(h.URL)
		h.checkWire(at)
	}
	at.Child("method").CheckMethod(h.Method)
	if h.ExpectStatus != 0 {
		at.Child("expect_status").CheckStatus(h.ExpectStatus)
	}
	at.Child("headers").CheckHeaders(h.Headers)
	at.Child("body").CheckTemplate(h.Body)
	at.Child("timeout").CheckTimeout(h.Timeout)
	at.Child("order").CheckOneOf(h.Order, "", "cycle", "random")
	if len(h.Requests) > 0 && h.RequestsFile != "" {
		at.Child("requests_file").Errf("requests and requests_file are exclusive: list the requests here or name a file")
	}
	if len(h.Requests) > maxRequests {
		at.Child("requests").Errf("at most %d requests, got %d", maxRequests, len(h.Requests))
	}
	for i, r := range h.Requests {
		rf := at.Child("requests").Index(i)
		if r.URL == "" {
			rf.Child("url").Errf("required: the request's URL")
		} else {
			rf.Child("url").CheckURL(r.URL)
			rf.Child("url").CheckTemplate(r.URL)
		}
		if r.Method != "" {
			rf.Child("method").CheckMethod(r.Method)
		}
		if r.Weight < 0 || r.Weight > 1_000_000 {
			rf.Child("weight").Errf("must be 1–1000000 (0: 1), got %d", r.Weight)
		}
		rf.Child("headers").CheckHeaders(r.Headers)
	}
}

// checkWire checks http2, h2c and tls against the URL's scheme.
func (h *Path) checkWire(at suite.Field) {
	scheme, _, _ := strings.Cut(h.URL, "://")
	switch {
	case h.HTTP2 && scheme != "https":
		at.Child("http2").Errf("HTTP/2 over TLS needs an https:// URL, got %s://; cleartext HTTP/2 is h2c: true or an h2c:// URL", scheme)
	case h.H2C && scheme == "https":
		at.Child("h2c").Errf("h2c is cleartext HTTP/2: it takes an http:// URL; over TLS use http2: true")
	case h.H2C && h.HTTP2:
		at.Child("h2c").Errf("h2c and http2 are exclusive (cleartext or TLS)")
	}
	if t := h.TLS; t != nil {
		if scheme != "https" {
			at.Child("tls").Errf("TLS settings given for a %s:// URL: use https://", scheme)
		}
		if (t.Cert == "") != (t.Key == "") {
			at.Child("tls").Errf("cert and key go together: give both (a PEM client certificate and its private key) or neither")
		}
	}
}

// BatchProblem: an HTTP request carries no batch of keys.
func (h *Path) BatchProblem(path string, b int) string {
	return fmt.Sprintf("batch %d with http path %q: an HTTP request carries no batch; accepted: 1", b, path)
}

// Redacted hides the URLs' credentials and secret query parameters, and
// the values of secret headers.
func (h *Path) Redacted(p secret.Policy, found *secret.Set) suite.PathSpec {
	c := *h
	c.URL = p.URL(h.URL, found)
	c.Headers = p.Headers(h.Headers, found)
	if len(h.Requests) > 0 {
		c.Requests = make([]Request, len(h.Requests))
		for i, r := range h.Requests {
			r.URL = p.URL(r.URL, found)
			r.Headers = p.Headers(r.Headers, found)
			c.Requests[i] = r
		}
	}
	return &c
}

// PacesStreams implements suite.StreamPacer: an HTTP/2 path (http2,
// h2c, an h2c:// URL) keeps up to pipeline streams in flight per
// connection at a rate.
func (p *Path) PacesStreams() bool {
	return p.HTTP2 || p.H2C || strings.HasPrefix(p.URL, "h2c://")
}
