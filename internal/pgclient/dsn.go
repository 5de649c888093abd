package pgclient

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/benchrig/benchrig/internal/secret"
)

// Redacted replaces a secret wherever one is hidden from output: the one
// placeholder of package secret.
const Redacted = secret.Placeholder

// Redact returns dsn with every password replaced by the placeholder, in
// both URL form (postgres://user:secret@host/db?password=secret) and
// key=value form (host=h password='se cret'), by the one policy of package
// secret. It never fails: text it cannot parse is redacted generously.
func Redact(dsn string) string { return secret.Policy{}.DSN(dsn, nil) }

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
	var found secret.Set
	secret.Policy{}.DSN(dsn, &found)
	var out []string
	if cfg, err := pgx.ParseConfig(dsn); err == nil && cfg.Password != "" {
		out = append(out, cfg.Password)
	}
	return append(out, found.Values()...)
}

// scrubbed is an error whose message has had secrets removed.
type scrubbed struct {
	msg   string
	cause error // nil when the cause's own message held a secret
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.cause }

// scrub returns err with every non-empty secret replaced by the placeholder
// in its message, where it stands as a whole token (secret.Scrub). When the message held a secret, the chain below it is cut, so that
// no unwrapped error can reveal it; classification of such an error is lost,
// which is the lesser evil. Sentinel context errors are kept.
func scrub(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := msg
	clean = secret.Scrub(clean, secrets...)
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

// ScrubDSN returns err with every password of dsn (as pgx reads it, and as
// the secret policy finds it written) removed from its message.
func ScrubDSN(err error, dsn string) error { return scrub(err, secretsOf(dsn)...) }
