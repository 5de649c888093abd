package http

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config describes the request every connection sends. Plain data: it is
// recorded in results files.
type Config struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
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
}

// DefaultConfig: GET, 10 s request timeout, 5 s dial timeout, any 2xx.
func DefaultConfig() Config {
	return Config{Method: "GET", Timeout: 10 * time.Second, DialTimeout: 5 * time.Second}
}

// target is the parsed form of a Config.
type target struct {
	addr    string // host:port to dial
	request []byte // one complete request, sent as is
	head    bool   // HEAD: responses have no body
}

// ParseURL checks a benchmark URL: http only (TLS is not supported by this
// driver yet), a host, and a port (default 80).
func ParseURL(raw string) (*url.URL, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", fmt.Errorf("not a URL: %w", err)
	}
	if u.Scheme != "http" {
		if u.Scheme == "https" {
			return nil, "", fmt.Errorf("%q: https is not supported yet; use http://", raw)
		}
		return nil, "", fmt.Errorf("%q: want http://HOST[:PORT]/PATH", raw)
	}
	if u.Hostname() == "" {
		return nil, "", fmt.Errorf("%q: no host; want http://HOST[:PORT]/PATH", raw)
	}
	if u.User != nil {
		// never echo the credentials back
		return nil, "", fmt.Errorf("credentials in the URL are not sent and would be recorded: remove them and pass -H 'Authorization: …' (recorded redacted)")
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return nil, "", fmt.Errorf("%q: port must be 1–65535", raw)
	}
	return u, net.JoinHostPort(u.Hostname(), port), nil
}

func (c *Config) compile() (*target, error) {
	u, addr, err := ParseURL(c.URL)
	if err != nil {
		return nil, err
	}
	method := strings.ToUpper(c.Method)
	if method == "" {
		method = "GET"
	}
	for _, r := range method {
		if r < 'A' || r > 'Z' {
			return nil, fmt.Errorf("method %q: want a token such as GET or POST", c.Method)
		}
	}
	if c.ExpectStatus != 0 && (c.ExpectStatus < 100 || c.ExpectStatus > 599) {
		return nil, fmt.Errorf("expected status %d: want 100–599", c.ExpectStatus)
	}
	path := u.RequestURI()
	var b strings.Builder
	b.WriteString(method + " " + path + " HTTP/1.1\r\n")
	hasHost, hasUA := false, false
	for k, v := range c.Headers {
		if strings.ContainsAny(k, "\r\n:") || strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("header %q: names and values may not contain CR, LF (or ':' in names)", k)
		}
		switch strings.ToLower(k) {
		case "host":
			hasHost = true
		case "user-agent":
			hasUA = true
		case "content-length", "transfer-encoding", "connection":
			return nil, fmt.Errorf("header %q is set by benchrig (keep-alive, length from --body)", k)
		}
	}
	if !hasHost {
		b.WriteString("Host: " + u.Host + "\r\n")
	}
	if !hasUA {
		b.WriteString("User-Agent: benchrig\r\n")
	}
	for _, k := range sortedKeys(c.Headers) {
		b.WriteString(k + ": " + c.Headers[k] + "\r\n")
	}
	if c.Body != "" || method == "POST" || method == "PUT" || method == "PATCH" {
		b.WriteString("Content-Length: " + strconv.Itoa(len(c.Body)) + "\r\n")
	}
	b.WriteString("\r\n")
	b.WriteString(c.Body)
	return &target{addr: addr, request: []byte(b.String()), head: method == "HEAD"}, nil
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
