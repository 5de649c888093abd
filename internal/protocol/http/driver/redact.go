package http

import "github.com/benchrig/benchrig/internal/secret"

// RedactedValue replaces a secret header value in records.
const RedactedValue = secret.Placeholder

// IsSecretHeader reports whether a header's value is a credential
// (Authorization, Cookie, X-Api-Key, X-Upstream-Key, …) that must not reach
// results files, reports or logs: the one policy of package secret, without
// the names a suite or --secret-header adds (system.AddressDriver redacts
// the recorded config with those too).
func IsSecretHeader(name string) bool { return secret.Policy{}.Header(name) }

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
