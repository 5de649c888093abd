package http

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http2/hpack"
)

// Config describes the requests every connection sends. Plain data: it is
// recorded in results files (Redacted first).
type Config struct {
	// URL, Method, Headers and Body are the one request to send, unless
	// Requests lists several.
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	// Requests, when set, are sent instead of URL/Method/Body (a request
	// file, LoadTargets). Headers then apply to every request, a
	// request's own header of the same name winning. Every request goes
	// to one host:port; URL may be empty or name that same host:port.
	Requests []RequestSpec `json:"requests,omitempty"`
	// Order picks among Requests: "cycle" (the default: in order, each
	// request Weight times in a row, then again from the first) or
	// "random" (each request drawn with probability Weight ÷ total,
	// reproducibly from Seed and the request's sequence number).
	Order string `json:"order,omitempty"`
	// Seed seeds Order "random".
	Seed uint64 `json:"seed,omitempty"`
	// RetryUnsafe lets a request that is not idempotent (POST, PATCH, …)
	// be sent again after its reused connection ended before any byte of
	// its response arrived, as GET, HEAD, OPTIONS, TRACE, PUT and DELETE
	// always are. Off, such a request is counted as an error.
	RetryUnsafe bool `json:"retry_unsafe,omitempty"`
	// Timeout bounds each request from send to complete response; 0 means
	// none. A request times out between 95 % and 100 % of it.
	Timeout time.Duration `json:"timeout"`
	// DialTimeout bounds each connect.
	DialTimeout time.Duration `json:"dial_timeout"`
	// ExpectStatus is the status that counts as success; 0 means any 2xx.
	ExpectStatus int `json:"expect_status,omitempty"`
	// ExpectBody, when set, must equal the response body exactly.
	ExpectBody *string `json:"expect_body,omitempty"`
	// ExpectBodyContains, when set, must occur in the response body.
	ExpectBodyContains string `json:"expect_body_contains,omitempty"`
	// TLS configures https:// connections (nil: verify against the
	// system's roots, SNI from the URL).
	TLS *TLSConfig `json:"tls,omitempty"`
	// HTTP2 speaks HTTP/2 over TLS (ALPN h2 only) to an https:// URL.
	// Without it an https:// server is spoken to in HTTP/1.1 unless it
	// offers only h2.
	HTTP2 bool `json:"http2,omitempty"`
	// H2C speaks cleartext HTTP/2 with prior knowledge to an http:// URL
	// (as an h2c:// URL does).
	H2C bool `json:"h2c,omitempty"`
	// Negotiated is what the connections settled (protocol, TLS version,
	// cipher, ALPN), filled in for the record after a sample; never read
	// by the driver.
	Negotiated *Negotiated `json:"negotiated,omitempty"`
}

// RequestSpec is one request of several (Config.Requests).
type RequestSpec struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	// BodyFile names the file Body was read from (recorded; the driver
	// sends Body).
	BodyFile string `json:"body_file,omitempty"`
	// Weight is the request's share (1–MaxWeight; 0 means 1).
	Weight int `json:"weight,omitempty"`
}

// Bounds of Config.Requests.
const (
	// MaxRequests is the most requests one driver sends.
	MaxRequests = 1 << 20
	// MaxWeight bounds RequestSpec.Weight.
	MaxWeight = 1_000_000
	// MaxPrepared bounds the bytes of all prepared requests together.
	MaxPrepared = 256 << 20
	// MaxOps is the most requests reported one by one (Driver.Ops): with
	// more, the results have one line for all.
	MaxOps = 16
)

// DefaultConfig: GET, 10 s request timeout, 5 s dial timeout, any 2xx.
func DefaultConfig() Config {
	return Config{Method: "GET", Timeout: 10 * time.Second, DialTimeout: 5 * time.Second}
}

// prepared is one request as bytes, sent as is.
type prepared struct {
	bytes []byte
	head  bool // HEAD: its response has no body
	retry bool // may be sent again on a new connection (idempotent, or RetryUnsafe)
	label string
	// scheme and host are the URL's.
	scheme, host string
	// h2 is the request as HTTP/2 header fields (pseudo-headers first,
	// names lower-cased) and body.
	h2     []hpack.HeaderField
	h2body []byte
}

// target is the compiled form of a Config.
type target struct {
	addr   string // host:port to dial
	scheme string // http, https or h2c: the same for every request
	host   string // the URL's host name (SNI)
	// request and head are reqs[0]'s, for the common case of one request.
	request []byte
	head    bool
	reqs    []prepared
	// cum[i] is the sum of the weights of reqs[0..i]; total is the last.
	cum    []uint64
	total  uint64
	random bool
	seed   uint64
	// ops labels each request for Driver.Ops when there are 2–MaxOps;
	// nil otherwise (Outcome.Op stays 0).
	ops []string
}

// op is request i's Outcome.Op.
func (t *target) op(i int) uint8 {
	if t.ops == nil {
		return 0
	}
	return uint8(i)
}

// multi reports whether there is more than one request to pick from.
func (t *target) multi() bool { return len(t.reqs) > 1 }

// pick returns the index of the request with sequence number seq (the
// engine's global numbering, so the choice depends on neither the
// connection nor the timing).
func (t *target) pick(seq uint64) int {
	if len(t.reqs) == 1 {
		return 0
	}
	x := seq
	if t.random {
		x = splitmix64(t.seed ^ splitmix64(seq))
	}
	x %= t.total
	lo, hi := 0, len(t.cum)-1 // the first i with cum[i] > x
	for lo < hi {
		m := (lo + hi) / 2
		if t.cum[m] > x {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// splitmix64 is SplitMix64's finaliser: a cheap, well-mixed hash.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func (c *Config) compile() (*target, error) {
	if c.ExpectStatus != 0 && (c.ExpectStatus < 100 || c.ExpectStatus > 599) {
		return nil, fmt.Errorf("expected status %d: want 100–599", c.ExpectStatus)
	}
	t := &target{seed: c.Seed}
	switch c.Order {
	case "", "cycle":
	case "random":
		t.random = true
	default:
		return nil, fmt.Errorf("order %q: want cycle or random", c.Order)
	}
	specs := c.Requests
	if len(specs) == 0 {
		if c.Order != "" {
			return nil, fmt.Errorf("order %q given for a single request: it picks among several (a request file)", c.Order)
		}
		specs = []RequestSpec{{Method: c.Method, URL: c.URL, Body: c.Body}}
	} else {
		if c.Method != "" && c.Method != "GET" || c.Body != "" {
			return nil, fmt.Errorf("a method or body given beside %d requests: set them per request (in the request file)", len(specs))
		}
		if len(specs) > MaxRequests {
			return nil, fmt.Errorf("%d requests: at most %d", len(specs), MaxRequests)
		}
	}
	if c.URL != "" && len(c.Requests) > 0 {
		_, addr, err := ParseURL(c.URL)
		if err != nil {
			return nil, err
		}
		t.addr = addr
	}
	size := 0
	for i, s := range specs {
		p, addr, err := prepare(s, c.Headers, c.RetryUnsafe)
		if err != nil {
			if len(c.Requests) > 0 {
				return nil, fmt.Errorf("request %d (%s %s): %w", i+1, s.Method, s.URL, err)
			}
			return nil, err
		}
		if t.scheme == "" {
			t.scheme, t.host = p.scheme, p.host
		} else if p.scheme != t.scheme {
			return nil, fmt.Errorf("request %d (%s %s) is %s://, the others %s://: all requests of one run use one scheme", i+1, s.Method, s.URL, p.scheme, t.scheme)
		}
		if t.addr == "" {
			t.addr = addr
		} else if addr != t.addr {
			return nil, fmt.Errorf("request %d (%s %s) goes to %s, the others to %s: all requests of one run go to one host:port", i+1, s.Method, s.URL, addr, t.addr)
		}
		w := s.Weight
		if w == 0 {
			w = 1
		}
		if w < 1 || w > MaxWeight {
			return nil, fmt.Errorf("request %d (%s %s): weight %d: want 1–%d", i+1, s.Method, s.URL, s.Weight, MaxWeight)
		}
		if size += len(p.bytes); size > MaxPrepared {
			return nil, fmt.Errorf("requests: %d bytes prepared by request %d, over the bound of %d MiB", size, i+1, MaxPrepared>>20)
		}
		t.total += uint64(w)
		t.cum = append(t.cum, t.total)
		t.reqs = append(t.reqs, p)
	}
	t.request, t.head = t.reqs[0].bytes, t.reqs[0].head
	if n := len(t.reqs); n > 1 && n <= MaxOps {
		seen := map[string]int{}
		for _, p := range t.reqs {
			label := p.label
			if seen[p.label]++; seen[p.label] > 1 {
				label += " #" + strconv.Itoa(seen[p.label])
			}
			t.ops = append(t.ops, label)
		}
	}
	return t, nil
}

// idempotent reports whether a method may be sent again, as net/http's
// Transport judges it (RFC 9110 §9.2.2).
func idempotent(method string) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE":
		return true
	}
	return false
}

// prepare builds one request's bytes; common headers are the Config's.
func prepare(s RequestSpec, common map[string]string, retryUnsafe bool) (prepared, string, error) {
	u, addr, err := ParseURL(s.URL)
	if err != nil {
		return prepared{}, "", err
	}
	method := strings.ToUpper(s.Method)
	if method == "" {
		method = "GET"
	}
	for _, r := range method {
		if r < 'A' || r > 'Z' {
			return prepared{}, "", fmt.Errorf("method %q: want a token such as GET or POST", s.Method)
		}
	}
	headers := mergeHeaders(common, s.Headers)
	path := u.RequestURI()
	var b strings.Builder
	b.WriteString(method + " " + path + " HTTP/1.1\r\n")
	hasHost, hasUA := false, false
	for k, v := range headers {
		if k == "" || strings.ContainsAny(k, "\r\n: \t") || strings.ContainsAny(v, "\r\n") {
			return prepared{}, "", fmt.Errorf("header %q: names and values may not contain CR, LF (or ':' and spaces in names)", k)
		}
		switch strings.ToLower(k) {
		case "host":
			hasHost = true
		case "user-agent":
			hasUA = true
		case "content-length", "transfer-encoding", "connection":
			return prepared{}, "", fmt.Errorf("header %q is set by benchrig (keep-alive, length from --body)", k)
		}
	}
	if !hasHost {
		b.WriteString("Host: " + u.Host + "\r\n")
	}
	if !hasUA {
		b.WriteString("User-Agent: benchrig\r\n")
	}
	for _, k := range sortedKeys(headers) {
		b.WriteString(k + ": " + headers[k] + "\r\n")
	}
	if s.Body != "" || method == "POST" || method == "PUT" || method == "PATCH" {
		b.WriteString("Content-Length: " + strconv.Itoa(len(s.Body)) + "\r\n")
	}
	b.WriteString("\r\n")
	b.WriteString(s.Body)
	p := prepared{bytes: []byte(b.String()), head: method == "HEAD",
		retry: retryUnsafe || idempotent(method), label: method + " " + path,
		scheme: u.Scheme, host: u.Hostname()}
	p.h2, p.h2body = h2Fields(u, method, headers, s.Body)
	return p, addr, nil
}

// mergeHeaders returns common overridden by own (names compared without
// case); either may be nil.
func mergeHeaders(common, own map[string]string) map[string]string {
	if len(own) == 0 {
		return common
	}
	if len(common) == 0 {
		return own
	}
	m := make(map[string]string, len(common)+len(own))
	for k, v := range common {
		m[k] = v
	}
	for k, v := range own {
		for ck := range m {
			if strings.EqualFold(ck, k) {
				delete(m, ck)
			}
		}
		m[k] = v
	}
	return m
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// h2Fields is a request as HTTP/2 header fields (RFC 9113 §8.3): the
// pseudo-headers, then user-agent and the headers lower-cased (Host
// becomes :authority), content-length for a body.
func h2Fields(u *url.URL, method string, headers map[string]string, body string) ([]hpack.HeaderField, []byte) {
	scheme := u.Scheme
	if scheme == "h2c" {
		scheme = "http"
	}
	authority := u.Host
	for k, v := range headers {
		if strings.EqualFold(k, "host") {
			authority = v
		}
	}
	fs := []hpack.HeaderField{{Name: ":method", Value: method}, {Name: ":scheme", Value: scheme},
		{Name: ":authority", Value: authority}, {Name: ":path", Value: u.RequestURI()}}
	hasUA := false
	for _, k := range sortedKeys(headers) {
		lk := strings.ToLower(k)
		switch lk {
		case "host":
			continue
		case "user-agent":
			hasUA = true
		}
		fs = append(fs, hpack.HeaderField{Name: lk, Value: headers[k], Sensitive: IsSecretHeader(k)})
	}
	if !hasUA {
		fs = append(fs, hpack.HeaderField{Name: "user-agent", Value: "benchrig"})
	}
	if body != "" || method == "POST" || method == "PUT" || method == "PATCH" {
		fs = append(fs, hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(body))})
	}
	return fs, []byte(body)
}
