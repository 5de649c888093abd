package target

import (
	"context"
	"errors"
	"fmt"
	"github.com/benchrig/benchrig/internal/secret"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Limits of a response check.
const (
	// CheckTimeout bounds one check when ctx allows longer.
	CheckTimeout = 10 * time.Second
	// maxCheckBody is the largest response body a check reads.
	maxCheckBody = 16 << 20
	// snippetBytes is how much of the body a failed check shows.
	snippetBytes = 200
)

// Check is a response check: one HTTP request and what its response must
// be. All set conditions must hold. It is plain data, as in a suite file.
type Check struct {
	// Method is the request method; empty means GET.
	Method string `json:"method,omitempty"`
	// URL is the absolute http:// or https:// URL to request.
	URL string `json:"url"`
	// Headers are request headers ("Host" sets the Host header).
	Headers map[string]string `json:"headers,omitempty"`
	// Body is the request body.
	Body string `json:"body,omitempty"`
	// Status is the required status; 0 means any 2xx.
	Status int `json:"status,omitempty"`
	// BodyEquals, when set, is the exact body required.
	BodyEquals *string `json:"body_equals,omitempty"`
	// BodyContains, when not empty, must occur in the body.
	BodyContains string `json:"body_contains,omitempty"`
	// JSON maps dot paths into a JSON body ("data.id", "items.0.name") to
	// the values they must equal. Numbers compare by value (1 equals 1.0);
	// objects and arrays compare whole.
	JSON map[string]any `json:"json,omitempty"`
}

// Validate checks the check's own fields, naming the bad one.
func (c Check) Validate() error {
	if err := checkHTTPURL(c.URL); err != nil {
		return fmt.Errorf("url: %w", err)
	}
	if c.Method != "" && !isToken(c.Method) {
		return fmt.Errorf("method %q: not an HTTP method", c.Method)
	}
	if c.Status != 0 && (c.Status < 100 || c.Status > 599) {
		return fmt.Errorf("status %d: want an HTTP status 100-599, or 0 for any 2xx", c.Status)
	}
	for k := range c.Headers {
		if !isToken(k) {
			return fmt.Errorf("headers: %q is not a header name", k)
		}
	}
	for path := range c.JSON {
		if path == "" || strings.HasPrefix(path, ".") || strings.HasSuffix(path, ".") || strings.Contains(path, "..") {
			return fmt.Errorf("json: path %q: want dot-separated keys like data.id or items.0.name", path)
		}
	}
	return nil
}

// Redacted returns a copy safe to log or serialize: the URL's credentials
// and the values of credential headers (Authorization, Cookie, tokens,
// keys) are replaced by the placeholder of package secret.
func (c Check) Redacted() Check {
	out := c
	out.URL = redactURL(c.URL)
	out.Headers = secret.Policy{}.Headers(c.Headers, nil)
	return out
}

// RunCheck performs the check's request and verifies the response. A failed
// check is an error on one line that lists what did not hold, then the
// status and the first 200 bytes of the body.
func RunCheck(ctx context.Context, c Check) error {
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	what := "check " + method + " " + redactURL(c.URL)
	if err := c.Validate(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()

	var body io.Reader
	if c.Body != "" {
		body = strings.NewReader(c.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL, body)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	for k, v := range c.Headers {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err) // the client redacts the URL
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxCheckBody+1))
	if err != nil {
		return fmt.Errorf("%s: read body: %w; got status %d", what, err, resp.StatusCode)
	}
	if len(b) > maxCheckBody {
		return fmt.Errorf("%s: body larger than %d MiB; got status %d", what, maxCheckBody>>20, resp.StatusCode)
	}

	if fails := c.failures(resp.StatusCode, b); len(fails) > 0 {
		return &CheckError{Check: what, Failures: fails, Status: resp.StatusCode, Body: snippet(b)}
	}
	return nil
}

// failures lists the conditions the response does not meet.
func (c Check) failures(status int, body []byte) []string {
	if !statusOK(status, c.Status) {
		return []string{fmt.Sprintf("status %d, want %s", status, wantStatus(c.Status))}
	}
	var fails []string
	if c.BodyEquals != nil && string(body) != *c.BodyEquals {
		fails = append(fails, fmt.Sprintf("body differs from body_equals %q", cut(*c.BodyEquals, 60)))
	}
	if c.BodyContains != "" && !strings.Contains(string(body), c.BodyContains) {
		fails = append(fails, fmt.Sprintf("body does not contain %q", cut(c.BodyContains, 60)))
	}
	if len(c.JSON) > 0 {
		paths := make([]string, 0, len(c.JSON))
		for p := range c.JSON {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		doc, err := decodeJSON(body)
		if err != nil {
			return append(fails, "body is not JSON: "+err.Error())
		}
		for _, p := range paths {
			if err := matchJSONField(doc, p, c.JSON[p]); err != nil {
				fails = append(fails, err.Error())
			}
		}
	}
	return fails
}

// CheckError is a failed response check.
type CheckError struct {
	// Check names the request: "check GET http://127.0.0.1:3000/".
	Check string
	// Failures lists the conditions that did not hold.
	Failures []string
	// Status is the response status.
	Status int
	// Body is the start of the response body (at most 200 bytes).
	Body string
}

// Error formats the failure on one line.
func (e *CheckError) Error() string {
	return fmt.Sprintf("%s: %s; got status %d, body %s", e.Check, strings.Join(e.Failures, "; "), e.Status, e.Body)
}

// ErrCheckFailed matches every *CheckError with errors.Is.
var ErrCheckFailed = errors.New("response check failed")

// Is makes errors.Is(err, ErrCheckFailed) true for a CheckError.
func (e *CheckError) Is(target error) bool { return target == ErrCheckFailed }

// snippet quotes the first snippetBytes of a body, marking a cut.
func snippet(b []byte) string {
	if len(b) <= snippetBytes {
		return strconv.Quote(string(b))
	}
	return strconv.Quote(string(b[:snippetBytes])) + "…"
}

// cut shortens s to n bytes for messages.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// isToken reports whether s is an HTTP token (method or header name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
