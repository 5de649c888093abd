package http

import "regexp"

// secretHeader matches header names whose values are credentials.
var secretHeader = regexp.MustCompile(`(?i)(auth|cookie|token|secret|pass|api[-_]?key|session|credential)`)

// RedactedValue replaces a secret header value in records.
const RedactedValue = "[redacted]"

// IsSecretHeader reports whether a header's value is a credential
// (Authorization, Cookie, X-Api-Key, …) that must not reach results files,
// reports or logs.
func IsSecretHeader(name string) bool { return secretHeader.MatchString(name) }

// Redacted returns the config with the values of secret headers replaced,
// the common ones and every request's, for recording. The driver itself
// keeps sending the real values.
func (c Config) Redacted() Config {
	c.Headers = redactHeaders(c.Headers)
	if len(c.Requests) > 0 {
		reqs := make([]RequestSpec, len(c.Requests))
		for i, r := range c.Requests {
			r.Headers = redactHeaders(r.Headers)
			reqs[i] = r
		}
		c.Requests = reqs
	}
	return c
}

func redactHeaders(hs map[string]string) map[string]string {
	if len(hs) == 0 {
		return hs
	}
	h := make(map[string]string, len(hs))
	for k, v := range hs {
		if IsSecretHeader(k) {
			v = RedactedValue
		}
		h[k] = v
	}
	return h
}
