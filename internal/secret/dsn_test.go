package secret

import (
	"net/url"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
)

func TestDSN(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://bench:s3cret@db:5432/app?sslmode=disable", "postgres://bench:[redacted]@db:5432/app?sslmode=disable"},
		{"postgresql://bench@db/app", "postgresql://bench@db/app"},
		{"postgres://bench:@db/app", "postgres://bench:[redacted]@db/app"},
		{"postgres://db/app?user=u&password=s3cret&sslpassword=k3y", "postgres://db/app?user=u&password=[redacted]&sslpassword=[redacted]"},
		{"postgres://db/app?pass%77ord=s3cret", "postgres://db/app?pass%77ord=[redacted]"},
		{"postgres://bench:pa/ss@w@rd@db/app", "postgres://bench:[redacted]@db/app"},
		{"postgres://u:p%40ss@h1:5432,h2:5433/app", "postgres://u:[redacted]@h1:5432,h2:5433/app"},
		{"postgres://u:pa?ss@db/app", "postgres://u:[redacted]@db/app"},
		{"postgres://db:5432/app?password=p@ss&user=u", "postgres://db:5432/app?password=[redacted]&user=u"},
		{"postgres://db/app?application_name=a@b", "postgres://db/app?application_name=a@b"},
		// libpq ends the userinfo at the first '@' before any '/', past a '?' or '#'
		{"postgres://:#&0000@", "postgres://:[redacted]@"},
		{"postgresql://u:p?a=1&b@h/db", "postgresql://u:[redacted]@h/db"},
		{"POSTGRES://u:p#x&y@h:5432/db?sslmode=disable", "POSTGRES://u:[redacted]@h:5432/db?sslmode=disable"},
		{"postgres://u:p@h@x/db", "postgres://u:[redacted]@x/db"},
		{"http://h?a=1&b@c", "http://h?a=1&b@c"},
		{"host=db user=bench password=s3cret dbname=app", "host=db user=bench password=[redacted] dbname=app"},
		{"host=db password = s3cret", "host=db password = [redacted]"},
		{"host=db password='se cret\\' x' dbname=app", "host=db password=[redacted] dbname=app"},
		{"PASSWORD=s3cret host=db", "PASSWORD=[redacted] host=db"},
		{"host=db sslpassword=k3y", "host=db sslpassword=[redacted]"},
		{"host=db password='unterminated s3cret", "host=db [redacted]"},
		{"host=db password", "host=db [redacted]"},
		{"host=db user=bench", "host=db user=bench"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := (Policy{}).DSN(tt.in, nil); got != tt.want {
			t.Errorf("DSN(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("s3cret")
	f.Add("a b'c\\d")
	f.Add("p@ss/w:rd")
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, pw string) {
		fuzzcheck.Bound(t, len(pw), func() { checkDSNHidden(t, pw) })
	})
}

// checkDSNHidden redacts pw in every DSN form and fails when it shows.
func checkDSNHidden(t *testing.T, pw string) {
	{
		if len(pw) < 4 || strings.ContainsAny(pw, "\x00") {
			return
		}
		quoted := "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "'"
		userinfo := strings.TrimPrefix(url.UserPassword("u", pw).String(), "u:")
		for _, c := range []struct{ dsn, written string }{
			{"host=db user=u password=" + quoted + " dbname=app", quoted},
			{"password=" + quoted, quoted},
			{"postgres://u:" + userinfo + "@db/app", userinfo},
			{"postgres://db/app?password=" + url.QueryEscape(pw), url.QueryEscape(pw)},
			{"postgres://db/app?sslmode=disable&password=" + url.QueryEscape(pw) + "&user=u", url.QueryEscape(pw)},
		} {
			dsn := c.dsn
			// The mask itself, or the mask beside its neighbours ("[redacted] "
			// holds "ed] "), is no leak: look for the password with the mask
			// cut out.
			out := strings.ReplaceAll((Policy{}).DSN(dsn, nil), Placeholder, "\x00")
			if strings.Contains(out, url.QueryEscape(pw)) && !strings.Contains(strings.Replace(dsn, url.QueryEscape(pw), "", 1), url.QueryEscape(pw)) && len(url.QueryEscape(pw)) > 5 {
				t.Errorf("DSN(%q) = %q still holds the escaped password", dsn, out)
			}
			// A password that is also part of the fixed text (the DSN without
			// the password as it is written there: "s://" in "postgres://")
			// proves nothing.
			fixed := strings.Replace(dsn, c.written, "", 1)
			if strings.Contains(out, pw) && !strings.Contains(fixed, pw) {
				t.Errorf("DSN(%q) = %q still holds the password", dsn, out)
			}
		}
	}
}
