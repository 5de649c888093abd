package suite

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/benchrig/benchrig/internal/secret"
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
	raw, err := json.Marshal(redactSuite(s, nil))
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

// Redacted replaces a secret value in anything benchrig records: the one
// placeholder of package secret.
const Redacted = secret.Placeholder

// IsSecretName reports whether an environment variable or header of this
// name holds a secret under the default policy (secret.IsSecretName).
func IsSecretName(name string) bool { return secret.IsSecretName(name) }

// Policy is the suite's redaction policy: the default one widened by its
// secret_headers and secret_params.
func (s *Suite) Policy() secret.Policy { return secret.NewPolicy(s.SecretHeaders, s.SecretParams) }

// CollectSecrets adds to found every value the suite's record hides (so a
// run can scrub them from any text it writes later).
func (s *Suite) CollectSecrets(found *secret.Set) { redactSuite(s, found) }

// redactSuite returns a copy of s with credentials hidden by its policy,
// adding each hidden value to found (which may be nil): environment values
// (by name, and URLs with credentials inside any value), target and
// sidecar commands (--password=x and --password x), HTTP URLs (userinfo,
// secret query parameters) and headers, readiness and check URLs, DSNs and
// secret-named settings. s is not changed.
func redactSuite(s *Suite, found *secret.Set) *Suite {
	p := s.Policy()
	out := *s
	out.Targets = make(map[string]*Target, len(s.Targets))
	for name, t := range s.Targets {
		if t == nil {
			continue
		}
		tc := *t
		tc.Env = redactEnv(p, t.Env, found)
		tc.Command = p.Argv(t.Command, found)
		if t.Ready != nil {
			r := *t.Ready
			r.HTTP = p.URL(r.HTTP, found)
			tc.Ready = &r
		}
		if len(t.Checks) > 0 {
			tc.Checks = make([]Check, len(t.Checks))
			for i, c := range t.Checks {
				c.URL = p.URL(c.URL, found)
				tc.Checks[i] = c
			}
		}
		if t.Postgres != nil {
			pg := *t.Postgres
			pg.DSN = p.DSN(pg.DSN, found)
			pg.Settings = redactEnv(p, pg.Settings, found)
			if pg.Sidecar != nil {
				sc := *pg.Sidecar
				sc.Command = p.Argv(sc.Command, found)
				sc.Env = redactEnv(p, sc.Env, found)
				pg.Sidecar = &sc
			}
			tc.Postgres = &pg
		}
		if t.Redis != nil {
			rd := *t.Redis
			rd.Settings = redactEnv(p, rd.Settings, found)
			tc.Redis = &rd
		}
		out.Targets[name] = &tc
	}
	out.Paths = make(map[string]*Path, len(s.Paths))
	for name, pa := range s.Paths {
		if pa == nil {
			continue
		}
		pc := *pa
		if pa.Spec != nil {
			pc.Spec = pa.Spec.Redacted(p, found)
		}
		out.Paths[name] = &pc
	}
	return &out
}

// redactEnv copies a name → value map with each value shown as
// secret.Policy.EnvValue shows it.
func redactEnv(p secret.Policy, m map[string]string, found *secret.Set) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = p.EnvValue(k, v, found)
	}
	return out
}
