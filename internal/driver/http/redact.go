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
// for recording. The driver itself keeps sending the real values.
func (c Config) Redacted() Config {
	if len(c.Headers) == 0 {
		return c
	}
	h := make(map[string]string, len(c.Headers))
	for k, v := range c.Headers {
		if IsSecretHeader(k) {
			v = RedactedValue
		}
		h[k] = v
	}
	c.Headers = h
	return c
}
