package target

import "github.com/benchrig/benchrig/internal/secret"

// redacted replaces a secret wherever one is hidden from output.
const redacted = secret.Placeholder

// Redacted returns a copy of the spec that is safe to log or serialize,
// redacted by the default policy of package secret (RedactedBy).
func (s Spec) Redacted() Spec { return s.RedactedBy(secret.Policy{}, nil) }

// RedactedBy returns a copy of the spec with credentials hidden by policy
// p: the values of environment entries whose names are secret (PASSWORD,
// TOKEN, API_KEY…) and credentials inside other values (DATABASE_URL with
// a password), the values of secret flags in both forms (--password=x,
// --db-password x, requirepass x) and credentials inside arguments (URLs,
// DSNs), and the readiness URL's. Every value hidden is added to found
// (which may be nil).
func (s Spec) RedactedBy(p secret.Policy, found *secret.Set) Spec {
	out := s
	out.Env = p.Env(s.Env, found)
	out.Argv = p.Argv(s.Argv, found)
	out.Ready.HTTP = p.URL(s.Ready.HTTP, found)
	return out
}

// redactText hides credentials in free text by the default policy.
func redactText(s string) string { return secret.Policy{}.DSNText(s, nil) }

// redactURL returns a URL with its credentials (password, secret query
// parameters) hidden, whatever its form.
func redactURL(raw string) string { return secret.Policy{}.URL(raw, nil) }
