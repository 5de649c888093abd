package suite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// SHA256 returns the hex SHA-256 of the suite file's bytes as read, before
// any override.
func (s *Suite) SHA256() string { return s.Source.SHA256 }

// Resolved returns the suite as it will run, after overrides, as canonical
// JSON: compact, every object's keys sorted, durations as strings, secrets
// (environment values and headers whose names say token, password, key,
// auth, cookie, secret…) replaced by "[redacted]". The same suite always
// gives the same bytes.
func (s *Suite) Resolved() ([]byte, error) {
	raw, err := json.Marshal(redactSuite(s))
	if err != nil {
		return nil, fmt.Errorf("encode suite %q: %w", s.Name, err)
	}
	return canonicalJSON(raw)
}

// canonicalJSON re-encodes JSON with every object's keys sorted and no HTML
// escaping.
func canonicalJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Redacted replaces a secret value in anything benchrig records.
const Redacted = "[redacted]"

// secretNameRE matches names of environment variables and HTTP headers whose
// values are secrets.
var secretNameRE = regexp.MustCompile(`(?i)(pass|secret|token|auth|cookie|credential|api[-_]?key|private[-_]?key|session)`)

// IsSecretName reports whether an environment variable or header of this
// name holds a secret, whose value must never be logged or recorded.
func IsSecretName(name string) bool { return secretNameRE.MatchString(name) }

// redactSuite returns a copy of s whose secret environment values and
// headers are replaced by Redacted; s is not changed.
func redactSuite(s *Suite) *Suite {
	out := *s
	out.Targets = make(map[string]*Target, len(s.Targets))
	for name, t := range s.Targets {
		if t == nil {
			continue
		}
		tc := *t
		tc.Env = redactMap(t.Env)
		tc.Command = redactArgs(t.Command)
		out.Targets[name] = &tc
	}
	out.Paths = make(map[string]*Path, len(s.Paths))
	for name, p := range s.Paths {
		if p == nil {
			continue
		}
		pc := *p
		if p.HTTP != nil {
			h := *p.HTTP
			h.Headers = redactMap(h.Headers)
			pc.HTTP = &h
		}
		out.Paths[name] = &pc
	}
	return &out
}

// redactMap copies m with the values of secret names redacted.
func redactMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if IsSecretName(k) {
			v = Redacted
		}
		out[k] = v
	}
	return out
}

// redactArgs copies args with the value of each secret-named flag or
// assignment ("--password=x", "TOKEN=x") redacted.
func redactArgs(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		if name, _, ok := strings.Cut(a, "="); ok && IsSecretName(name) {
			a = name + "=" + Redacted
		}
		out[i] = a
	}
	return out
}
