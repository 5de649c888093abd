package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Redacted replaces a secret wherever one is hidden from output.
const Redacted = "xxxxx"

// secretKeys are the connection parameters whose values are secrets.
var secretKeys = map[string]bool{"password": true, "sslpassword": true}

// Redact returns dsn with every password replaced by "xxxxx", in both URL
// form (postgres://user:secret@host/db?password=secret) and key=value form
// (host=h password='se cret'). It never fails: text it cannot parse is
// redacted generously (everything that could be a password is hidden).
func Redact(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return redactURL(dsn)
	}
	return redactKeyValue(dsn)
}

// redactURL hides the userinfo password and password query values. The
// userinfo is taken to end at the last '@' before the query, so that an
// unencoded '@' or '/' inside a password is hidden too, and an unencoded '?'
// is recognised when no key=value follows it before an '@'.
func redactURL(dsn string) string {
	scheme, rest, _ := strings.Cut(dsn, "://")
	var b strings.Builder
	b.WriteString(scheme + "://")
	head := rest
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		head = rest[:q]
	}
	at := strings.LastIndexByte(head, '@')
	if at < 0 && strings.Contains(head, ":") {
		// postgres://u:pa?ss@host: an unencoded '?' in the password. Taken
		// as such when no key=value lies between it and the '@'.
		if a := strings.IndexByte(rest[len(head):], '@'); a >= 0 && !strings.Contains(rest[len(head):len(head)+a], "=") {
			at = len(head) + a
		}
	}
	if at >= 0 {
		user, _, hasPW := strings.Cut(rest[:at], ":")
		b.WriteString(user)
		if hasPW {
			b.WriteString(":" + Redacted)
		}
		rest = rest[at:]
	}
	head, query := rest, ""
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		head, query = rest[:q], rest[q:]
	}
	b.WriteString(head)
	if query == "" {
		return b.String()
	}
	b.WriteByte('?')
	for i, kv := range strings.Split(query[1:], "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		k, _, hasV := strings.Cut(kv, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			key = k
		}
		if hasV && secretKeys[strings.ToLower(key)] {
			b.WriteString(k + "=" + Redacted)
		} else {
			b.WriteString(kv)
		}
	}
	return b.String()
}

// redactKeyValue hides the values of password keys in libpq's key=value
// form: keys and values separated by '=' with optional spaces, values either
// bare or single-quoted with backslash escapes. From a malformed pair on, the
// rest of the string is hidden unless it holds no secret key at all.
func redactKeyValue(dsn string) string {
	var b strings.Builder
	i, n := 0, len(dsn)
	for i < n {
		// Whitespace between pairs.
		j := i
		for j < n && isSpace(dsn[j]) {
			j++
		}
		b.WriteString(dsn[i:j])
		i = j
		if i >= n {
			break
		}
		// Key.
		for j < n && dsn[j] != '=' && !isSpace(dsn[j]) {
			j++
		}
		key := dsn[i:j]
		k := j
		for k < n && isSpace(dsn[k]) {
			k++
		}
		if k >= n || dsn[k] != '=' {
			return b.String() + redactRest(dsn[i:])
		}
		k++
		for k < n && isSpace(dsn[k]) {
			k++
		}
		// Value.
		v := k
		if v < n && dsn[v] == '\'' {
			v++
			for v < n && dsn[v] != '\'' {
				if dsn[v] == '\\' {
					v++
				}
				v++
			}
			if v >= n {
				return b.String() + redactRest(dsn[i:])
			}
			v++
		} else {
			for v < n && !isSpace(dsn[v]) {
				if dsn[v] == '\\' {
					v++
				}
				v++
			}
			v = min(v, n)
		}
		b.WriteString(dsn[i:k])
		if secretKeys[strings.ToLower(key)] {
			b.WriteString(Redacted)
		} else {
			b.WriteString(dsn[k:v])
		}
		i = v
	}
	return b.String()
}

// redactRest hides a malformed tail when it mentions a secret key.
func redactRest(s string) string {
	low := strings.ToLower(s)
	for k := range secretKeys {
		if strings.Contains(low, k) {
			return Redacted
		}
	}
	return s
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// ParseDSN parses a connection string (URL or key=value form) into a pgx
// configuration. The password comes from the DSN, PGPASSWORD or the pgpass
// file, as libpq does; errors never contain it.
func ParseDSN(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse DSN %s: %w", Redact(dsn), scrub(err, secretsOf(dsn)...))
	}
	return cfg, nil
}

// Connect opens one connection to dsn. Errors name the redacted DSN and
// never contain the password.
func Connect(ctx context.Context, dsn string) (*pgx.Conn, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return ConnectConfig(ctx, cfg, dsn)
}

// ConnectConfig opens one connection with a parsed configuration; dsn is
// used, redacted, only to name the server in errors.
func ConnectConfig(ctx context.Context, cfg *pgx.ConnConfig, dsn string) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		secrets := append(secretsOf(dsn), cfg.Password)
		return nil, fmt.Errorf("postgres: connect to %s: %w", Redact(dsn), scrub(err, secrets...))
	}
	return conn, nil
}

// secretsOf returns the password values written in dsn, for scrubbing.
func secretsOf(dsn string) []string {
	var out []string
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			if p, ok := u.User.Password(); ok {
				out = append(out, p)
			}
			for k, vs := range u.Query() {
				if secretKeys[strings.ToLower(k)] {
					out = append(out, vs...)
				}
			}
		}
		return out
	}
	if cfg, err := pgx.ParseConfig(dsn); err == nil && cfg.Password != "" {
		out = append(out, cfg.Password)
	}
	return out
}

// scrubbed is an error whose message has had secrets removed.
type scrubbed struct {
	msg   string
	cause error // nil when the cause's own message held a secret
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.cause }

// scrub returns err with every non-empty secret replaced by "xxxxx" in its
// message. When the message held a secret, the chain below it is cut, so that
// no unwrapped error can reveal it; classification of such an error is lost,
// which is the lesser evil. Sentinel context errors are kept.
func scrub(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := msg
	for _, s := range secrets {
		if s != "" {
			clean = strings.ReplaceAll(clean, s, Redacted)
		}
	}
	if clean == msg {
		return err
	}
	var cause error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		cause = context.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		cause = context.Canceled
	}
	return &scrubbed{msg: clean, cause: cause}
}

// Scrub is scrub for other packages: it returns err with the given secrets
// (passwords) removed from its message.
func Scrub(err error, secrets ...string) error { return scrub(err, secrets...) }
