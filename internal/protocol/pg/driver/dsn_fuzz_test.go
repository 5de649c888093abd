package pg

import (
	"regexp"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/secret"
)

// fileKeys are the DSN settings that make pgx read a file when it parses
// (certificates, keys, the service and password files): inputs naming one
// are left out, so that the fuzzer never reads the machine's files.
var fileKeys = regexp.MustCompile(`(?i)(file|cert|key|service|sslpassword)`)

// FuzzDSN: every PostgreSQL DSN (a suite's, --pg-dsn's, a companion's) is
// parsed by pgclient.ParseDSN (pgx's parser, its errors scrubbed) and shown
// redacted by pgclient.Redact. Any text is parsed or refused without a
// panic; a password pgx reads is never in the redacted DSN, and a password
// the redaction finds is never in the parse error, as a whole token, when
// the DSN writes it once as a password (password=…, user:…@), so that one
// that is also a user or host name is not counted as shown.
func FuzzDSN(f *testing.F) {
	for _, s := range []string{
		"postgres://bench:s3cret-pw@127.0.0.1:5432/bench?sslmode=disable",
		"host=127.0.0.1 port=5432 user=bench password='se cret\\'s' dbname=x",
		"postgresql://u:p%40ssword@[::1]:5433/db?password=other-pw&connect_timeout=5",
		"host=/tmp user=u password=hunter2hunter2 port=99999",
		"postgres://u:zz-pass-zz@h:notaport/db", "user=u password=", "postgres://%zz", "password='unterminated",
		"postgres://:#&0000@", "postgres://u:p?a=1&b@h/db",
	} {
		f.Add(s)
	}
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, dsn string) {
		if len(dsn) > 4096 || fileKeys.MatchString(dsn) {
			return
		}
		fuzzcheck.Bound(t, len(dsn), func() {
			// a password as the DSN writes it: password=…, or a URL's
			// user:…@, written once (not also a user or host name)
			shown := func(pw string) bool {
				return len(pw) >= 6 && strings.Count(dsn, pw) == 1 && !strings.Contains(secret.Placeholder, pw) &&
					(strings.Contains(dsn, "password="+pw) || strings.Contains(dsn, "password='"+pw) || strings.Contains(dsn, ":"+pw+"@"))
			}
			// in text as a whole token (what the scrubbing hides)
			in := func(text, pw string) bool { return secret.Scrub(text, pw) != text }
			redacted := pgclient.Redact(dsn)
			cfg, err := pgclient.ParseDSN(dsn)
			if err == nil {
				if pw := cfg.Password; shown(pw) && in(redacted, pw) {
					t.Fatalf("password %q in the redacted DSN %q", pw, redacted)
				}
				return
			}
			var found secret.Set
			secret.Policy{}.DSN(dsn, &found)
			for _, pw := range found.Values() {
				if shown(pw) && in(err.Error(), pw) {
					t.Fatalf("password %q in the parse error: %v", pw, err)
				}
			}
		})
	})
}
