package suite

import (
	"regexp"
	"strings"
	"time"
)

// Path is one named request sent to a target. Exactly one of HTTP, PG and
// RESP is set; it decides the path's protocol.
type Path struct {
	// HTTP, PG and RESP: the request, in its protocol.
	HTTP *HTTPPath `json:"http,omitempty"`
	PG   *PGPath   `json:"pg,omitempty"`
	RESP *RESPPath `json:"resp,omitempty"`
	// Assert are assertions (see ParseExpr) every sample of the path must
	// satisfy, e.g. cache_misses == 0; one that fails makes the sample
	// UNHEALTHY with the expression and both sides' values.
	Assert []string `json:"assert,omitempty"`
}

// Protocol returns the path's protocol, "" when it names none.
func (p *Path) Protocol() Protocol {
	switch {
	case p.HTTP != nil:
		return HTTP
	case p.PG != nil:
		return PG
	case p.RESP != nil:
		return RESP
	}
	return ""
}

// HTTPPath is an HTTP request.
type HTTPPath struct {
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
	Timeout *Duration `json:"timeout,omitempty"`
	// Requests are several requests sent instead of one (vegeta's targets):
	// cycled in order, each Weight times in a row, or picked at random
	// (Order: random, seeded by the sample's seed). All go to the host:port
	// of URL. Headers apply to each; a request's own header wins.
	Requests []HTTPRequest `json:"requests,omitempty"`
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
	TLS *HTTPTLS `json:"tls,omitempty"`
	// HTTP2 speaks HTTP/2 over TLS (ALPN h2) to an https:// URL; the
	// cell's pipeline is then the concurrent streams per connection
	// (h2load's -m). Without it, an https:// server that offers only h2
	// is spoken to in HTTP/2 too.
	HTTP2 bool `json:"http2,omitempty"`
	// H2C speaks cleartext HTTP/2 with prior knowledge to an http:// URL,
	// as an h2c:// URL does.
	H2C bool `json:"h2c,omitempty"`
}

// HTTPTLS is how an https:// path's connections are made.
type HTTPTLS struct {
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

// HTTPRequest is one of a path's several requests.
type HTTPRequest struct {
	Method  string            `json:"method,omitempty"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	// Weight is the request's share (1–1000000; default 1).
	Weight int `json:"weight,omitempty"`
}

// PGPath is a PostgreSQL request: one of the pg driver's named access paths
// (Path, e.g. "prepared-one", "any"), or a custom SQL statement whose $1 is
// bound to the batch of keys.
type PGPath struct {
	// Path names a pg driver access path.
	Path string `json:"path,omitempty"`
	// SQL is a statement whose $1 is bound to the batch of keys.
	SQL string `json:"sql,omitempty"`
	// Batching is how prepared-one sends a batch of keys: roundtrips
	// (default, one statement after the other) or pipeline (one batch).
	Batching string `json:"batching,omitempty"`
	// Table is the table the driver's access paths read (default items).
	Table string `json:"table,omitempty"`
	// Form is how the any path binds its keys: param (default,
	// `= ANY($1::bigint[])` as pgx and node-postgres users write it), array
	// (`= ANY(ARRAY[$1,…,$k])` as pgbench scripts write it) or in
	// (`IN ($1,…,$k)`). It is in the path's label: any[array].
	Form string `json:"form,omitempty"`
	// PlanCacheMode is set on every benchmark connection: auto,
	// force_generic_plan or force_custom_plan (default: the server's).
	PlanCacheMode string `json:"plan_cache_mode,omitempty"`
	// Timeout bounds each request (default 10s; 0s: none).
	Timeout *Duration `json:"timeout,omitempty"`
}

// RESPPath is a RESP command. Key is the key template ({id} is replaced by
// the workload's key); multi-key commands (MGET, EXISTS, DEL, UNLINK,
// TOUCH) take one key per batch element.
type RESPPath struct {
	// Command is the command name, upper-cased when parsed.
	Command string `json:"command"`
	// Key is the key template.
	Key string `json:"key,omitempty"`
	// Value is the value written by SET-like commands.
	Value string `json:"value,omitempty"`
	// Args is a custom command's argv, each a template ({id}, {key}, {db});
	// Command is then "CUSTOM".
	Args []string `json:"args,omitempty"`
	// DB fills {db} in Key, Value and Args.
	DB string `json:"db,omitempty"`
	// ValidateSampled is the fraction (0–1) of replies compared with the
	// rows the target was filled with.
	ValidateSampled float64 `json:"validate_sampled,omitempty"`
	// Timeout bounds each request (default 10s; 0s: none).
	Timeout *Duration `json:"timeout,omitempty"`
}

// MaxRESPKeyTemplate bounds a RESP path's key template, in bytes: a key
// is a name, not a payload (redis-benchmark's keys are a few bytes).
const MaxRESPKeyTemplate = 4 << 10

// MaxRESPBatch is the largest batch (keys per request) of a RESP path.
const MaxRESPBatch = 1024

// multiKeyRESP are the RESP commands that take a batch of keys.
var multiKeyRESP = map[string]bool{"MGET": true, "EXISTS": true, "DEL": true, "UNLINK": true, "TOUCH": true}

// MultiKey reports whether the command takes a batch of keys.
func (r *RESPPath) MultiKey() bool { return multiKeyRESP[r.Command] }

var (
	pgPathRE    = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	pgIdentRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)
	respCmdRE   = regexp.MustCompile(`^[A-Z][A-Z0-9]*$`)
	headerKeyRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// checkHeaders checks the HTTP headers at field: names are tokens, and a
// value is one line (a CR or LF would end the header and start another in
// the request: run would refuse it, so plan does, at its position).
func (l *located) checkHeaders(field string, headers map[string]string) {
	for _, k := range sortedKeys(headers) {
		f := child(field, k)
		if !headerKeyRE.MatchString(k) {
			l.errf(f, "invalid header name %q", k)
		}
		v := headers[k]
		if i := strings.IndexAny(v, "\r\n"); i >= 0 {
			what := "CR (\\r)"
			if v[i] == '\n' {
				what = "LF (\\n)"
			}
			l.errOff(f, v, i, "header value holds a line break, %s at byte %d of %q: a header value is one line", what, i, v)
		}
	}
}

// pathPlaceholders are the placeholders a path template may use.
var pathPlaceholders = map[string]bool{PortPlaceholder: true, IDPlaceholder: true}

// pathDefaults fills the defaults of a decoded path.
func (s *Suite) pathDefaults(name string, p *Path) {
	f := child("paths", name)
	if h := p.HTTP; h != nil {
		if h.Method == "" {
			h.Method = "GET"
		}
		if !s.loc.present(f + ".http.expect_status") {
			h.ExpectStatus = 200
		}
	}
	if r := p.RESP; r != nil {
		r.Command = strings.ToUpper(r.Command)
	}
}

func (s *Suite) validatePath(name string, p *Path) {
	l, f := s.loc, child("paths", name)
	l.checkName(f, name)
	if p == nil {
		l.errf(f, "needs one of http, pg, resp")
		return
	}
	protos := setNames([]string{"http", "pg", "resp"}, p.HTTP != nil, p.PG != nil, p.RESP != nil)
	if len(protos) == 0 {
		l.errf(f, "needs one of http, pg, resp")
	}
	l.exclusive(f, protos, "a path is one request of one protocol")
	if h := p.HTTP; h != nil {
		hf := f + ".http"
		if h.URL == "" {
			l.errf(hf+".url", "required: the URL to request, e.g. http://127.0.0.1:{port}/")
		} else {
			l.checkPathURL(hf+".url", h.URL)
			l.checkPlaceholders(hf+".url", h.URL, pathPlaceholders, nil)
			l.checkHTTPWire(hf, h)
		}
		l.checkMethod(hf+".method", h.Method)
		if h.ExpectStatus != 0 {
			l.checkStatus(hf+".expect_status", h.ExpectStatus)
		}
		l.checkHeaders(hf+".headers", h.Headers)
		l.checkPlaceholders(hf+".body", h.Body, pathPlaceholders, nil)
		l.checkTimeout(hf+".timeout", h.Timeout)
		switch h.Order {
		case "", "cycle", "random":
		default:
			l.errf(hf+".order", "must be cycle or random, got %q", h.Order)
		}
		if len(h.Requests) > 0 && h.RequestsFile != "" {
			l.errf(hf+".requests_file", "requests and requests_file are exclusive: list the requests here or name a file")
		}
		if len(h.Requests) > maxHTTPRequests {
			l.errf(hf+".requests", "at most %d requests, got %d", maxHTTPRequests, len(h.Requests))
		}
		for i, r := range h.Requests {
			rf := index(hf+".requests", i)
			if r.URL == "" {
				l.errf(rf+".url", "required: the request's URL")
			} else {
				l.checkPathURL(rf+".url", r.URL)
				l.checkPlaceholders(rf+".url", r.URL, pathPlaceholders, nil)
			}
			if r.Method != "" {
				l.checkMethod(rf+".method", r.Method)
			}
			if r.Weight < 0 || r.Weight > 1_000_000 {
				l.errf(rf+".weight", "must be 1–1000000 (0: 1), got %d", r.Weight)
			}
			l.checkHeaders(rf+".headers", r.Headers)
		}
	}
	if q := p.PG; q != nil {
		qf := f + ".pg"
		l.exclusive(qf, setNames([]string{"path", "sql"}, q.Path != "", q.SQL != ""), "name a driver access path or give a statement")
		switch {
		case q.Path == "" && strings.TrimSpace(q.SQL) == "":
			l.errf(qf, "needs one of path (a driver access path, e.g. prepared-one, any) or sql (a statement whose $1 is the batch of keys)")
		case q.Path != "" && !pgPathRE.MatchString(q.Path):
			l.errf(qf+".path", "invalid access path %q; accepted: lower-case letters, digits and '-', e.g. prepared-one", q.Path)
		}
		switch q.Batching {
		case "", "roundtrips", "pipeline":
		default:
			l.errf(qf+".batching", "must be roundtrips or pipeline, got %q", q.Batching)
		}
		switch q.Form {
		case "":
		case "param", "array", "in":
			if q.Path != "any" {
				l.errf(qf+".form", "form is how the any path binds its keys; path %q takes none", q.Path)
			}
		default:
			l.errf(qf+".form", "must be param, array or in, got %q", q.Form)
		}
		switch q.PlanCacheMode {
		case "", "auto", "force_generic_plan", "force_custom_plan":
		default:
			l.errf(qf+".plan_cache_mode", "must be auto, force_generic_plan or force_custom_plan, got %q", q.PlanCacheMode)
		}
		if q.Table != "" && !pgIdentRE.MatchString(q.Table) {
			l.errf(qf+".table", "invalid table %q; accepted: a plain or schema-qualified identifier, e.g. items or public.items", q.Table)
		}
		l.checkTimeout(qf+".timeout", q.Timeout)
	}
	if r := p.RESP; r != nil {
		rf := f + ".resp"
		if r.Command == "" {
			l.errf(rf+".command", "required: a RESP command, e.g. GET or MGET")
		} else if !respCmdRE.MatchString(r.Command) {
			l.errf(rf+".command", "invalid command %q; accepted: a command name such as GET, MGET, SET", r.Command)
		}
		if r.Command == "CUSTOM" && len(r.Args) == 0 {
			l.errf(rf+".args", "required with command custom: the command's argv, e.g. [HGET, \"{key}\", name]")
		}
		if len(r.Args) > 0 && r.Command != "CUSTOM" {
			l.errf(rf+".args", "only with command custom (got command %s)", r.Command)
		}
		if len(r.Key) > MaxRESPKeyTemplate {
			l.errf(rf+".key", "key template of %d bytes is longer than the bound (%d bytes, 4 KiB); accepted: a template such as item:{id}", len(r.Key), MaxRESPKeyTemplate)
		}
		if r.ValidateSampled < 0 || r.ValidateSampled > 1 {
			l.errf(rf+".validate_sampled", "must be a fraction between 0 and 1, got %v", r.ValidateSampled)
		}
		l.checkTimeout(rf+".timeout", r.Timeout)
	}
}

// maxHTTPRequests bounds a path's requests (the driver's own bound).
const maxHTTPRequests = 1 << 20

// maxTimeout bounds a per-request timeout.
const maxTimeout = Duration(time.Hour)

// checkTimeout checks an optional per-request timeout: 0 (none) to an hour.
func (l *located) checkTimeout(field string, d *Duration) {
	if d != nil && (*d < 0 || *d > maxTimeout) {
		l.errf(field, "must be between 0s (no timeout) and %s, got %s", maxTimeout, *d)
	}
}

// checkPathURL checks a path's URL: http://, https:// or h2c:// (cleartext
// HTTP/2, checked as http://).
func (l *located) checkPathURL(field, raw string) {
	if rest, ok := strings.CutPrefix(raw, "h2c://"); ok {
		raw = "http://" + rest
	}
	l.checkURL(field, raw)
}

// checkHTTPWire checks http2, h2c and tls against the URL's scheme.
func (l *located) checkHTTPWire(f string, h *HTTPPath) {
	scheme, _, _ := strings.Cut(h.URL, "://")
	switch {
	case h.HTTP2 && scheme != "https":
		l.errf(f+".http2", "HTTP/2 over TLS needs an https:// URL, got %s://; cleartext HTTP/2 is h2c: true or an h2c:// URL", scheme)
	case h.H2C && scheme == "https":
		l.errf(f+".h2c", "h2c is cleartext HTTP/2: it takes an http:// URL; over TLS use http2: true")
	case h.H2C && h.HTTP2:
		l.errf(f+".h2c", "h2c and http2 are exclusive (cleartext or TLS)")
	}
	if t := h.TLS; t != nil {
		if scheme != "https" {
			l.errf(f+".tls", "TLS settings given for a %s:// URL: use https://", scheme)
		}
		if (t.Cert == "") != (t.Key == "") {
			l.errf(f+".tls", "cert and key go together: give both (a PEM client certificate and its private key) or neither")
		}
	}
}
