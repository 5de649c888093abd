package target

import (
	"net/url"
	"regexp"
	"strings"
)

// redacted replaces a secret wherever one is hidden from output.
const redacted = "xxxxx"

// Redacted returns a copy of the spec that is safe to log or serialize:
// values of environment entries whose key names a secret (PASSWORD, TOKEN,
// SECRET, AUTH, …), arguments that follow a password flag (--requirepass x,
// --password=x, -a x), and passwords inside URLs and key=value connection
// strings are replaced by "xxxxx".
func (s Spec) Redacted() Spec {
	out := s
	if s.Env != nil {
		out.Env = make([]string, len(s.Env))
		for i, kv := range s.Env {
			k, v, ok := strings.Cut(kv, "=")
			switch {
			case !ok:
				out.Env[i] = kv
			case secretName(k):
				out.Env[i] = k + "=" + redacted
			default:
				out.Env[i] = k + "=" + redactText(v)
			}
		}
	}
	if s.Argv != nil {
		out.Argv = redactArgv(s.Argv)
	}
	out.Ready.HTTP = redactURL(s.Ready.HTTP)
	return out
}

// secretWords are parts of environment variable and flag names that mark a
// secret value.
var secretWords = []string{"PASSWORD", "PASSWD", "PASS", "SECRET", "TOKEN", "AUTH", "CREDENTIAL", "APIKEY", "API_KEY", "PRIVATE"}

// secretName reports whether an environment variable or flag name names a
// secret.
func secretName(name string) bool {
	up := strings.ToUpper(strings.TrimLeft(name, "-"))
	up = strings.ReplaceAll(up, "-", "_")
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// redactArgv redacts the values of password flags and passwords inside
// URL-like arguments.
func redactArgv(argv []string) []string {
	out := make([]string, len(argv))
	hideNext := false
	for i, a := range argv {
		switch {
		case hideNext:
			out[i] = redacted
			hideNext = false
		case strings.HasPrefix(a, "-") && strings.Contains(a, "="):
			k, _, _ := strings.Cut(a, "=")
			if secretName(k) {
				out[i] = k + "=" + redacted
			} else {
				out[i] = redactText(a)
			}
		case a == "-a" || (strings.HasPrefix(a, "-") && secretName(a)):
			// "-a" is redis-cli's password flag; the value follows.
			out[i] = a
			hideNext = true
		case a == "requirepass" || a == "masterauth":
			// redis-server also takes config directives as bare words
			// ("requirepass secret").
			out[i] = a
			hideNext = true
		default:
			out[i] = redactText(a)
		}
	}
	return out
}

// dsnPassword matches password=value in key=value connection strings.
var dsnPassword = regexp.MustCompile(`(?i)\b(password|passwd|pass|pwd)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s&;]+)`)

// urlUserinfo matches scheme://user:password@ in free text.
var urlUserinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*):[^@\s/]*@`)

// redactText hides passwords in URLs and key=value pairs inside s.
func redactText(s string) string {
	if !strings.ContainsAny(s, "=@") {
		return s
	}
	s = urlUserinfo.ReplaceAllString(s, "${1}:"+redacted+"@")
	return dsnPassword.ReplaceAllString(s, "${1}="+redacted)
}

// redactURL returns a URL with its password (if any) hidden; text that does
// not parse as a URL is redacted as free text.
func redactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return redactText(raw)
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), redacted)
	}
	return redactText(u.String())
}
