package http

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// ParseURL checks a benchmark URL: http://, https:// (TLS) or h2c://
// (cleartext HTTP/2 with prior knowledge), a host, and a port (default 80,
// or 443 for https).
func ParseURL(raw string) (*url.URL, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", fmt.Errorf("not a URL: %w", err)
	}
	switch u.Scheme {
	case "http", "https", "h2c":
	default:
		return nil, "", fmt.Errorf("%q: want http://, https:// or h2c://HOST[:PORT]/PATH", raw)
	}
	if u.Hostname() == "" {
		return nil, "", fmt.Errorf("%q: no host; want %s://HOST[:PORT]/PATH", raw, u.Scheme)
	}
	if u.User != nil {
		// never echo the credentials back
		return nil, "", fmt.Errorf("credentials in the URL are not sent and would be recorded: remove them and pass -H 'Authorization: …' (recorded redacted)")
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return nil, "", fmt.Errorf("%q: port must be 1–65535", raw)
	}
	return u, net.JoinHostPort(u.Hostname(), port), nil
}

// NormalizeURL turns what users of autocannon, wrk and hey type into the
// URL the driver takes: a URL without a scheme means http://
// ("localhost:3000/" → "http://localhost:3000/", "127.0.0.1:18090" →
// "http://127.0.0.1:18090/"); an http://, https:// or h2c:// URL is kept
// as it is (a missing path becomes "/"). Anything else is an error saying
// what is accepted. The result passes ParseURL.
func NormalizeURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", fmt.Errorf("empty URL: want http://HOST[:PORT]/PATH or HOST[:PORT]/PATH")
	}
	if strings.ContainsAny(s, " \t\r\n") {
		return "", fmt.Errorf("%q: a URL has no spaces; want http://HOST[:PORT]/PATH or HOST[:PORT]/PATH", shownURL(raw))
	}
	if !strings.Contains(s, "://") {
		if strings.HasPrefix(s, "/") || strings.HasPrefix(s, ":") {
			return "", fmt.Errorf("%q: no host; want http://HOST[:PORT]/PATH or HOST[:PORT]/PATH", shownURL(raw))
		}
		if i := strings.IndexAny(s, "/?#"); i >= 0 && strings.Contains(s[:i], "@") || i < 0 && strings.Contains(s, "@") {
			// never echo the credentials back
			return "", fmt.Errorf("credentials in the URL are not sent and would be recorded: remove them and pass -H 'Authorization: …' (recorded redacted)")
		}
		s = "http://" + s
	}
	u, _, err := ParseURL(s)
	if err != nil {
		return "", err
	}
	if strings.Contains(s, "#") {
		return "", fmt.Errorf("%q: a fragment (#…) is never sent; remove it", shownURL(raw))
	}
	if u.Path == "" && u.Opaque == "" {
		u.Path = "/"
		s = u.String()
		// re-encoding may escape what the raw form held unescaped (a
		// zone's non-UTF-8 byte becomes %90, which a host refuses): the
		// URL returned must parse as it is
		if _, _, err := ParseURL(s); err != nil {
			return "", err
		}
	}
	return s, nil
}

func clipString(s string) string { return clip([]byte(s)) }

// shownURL is raw as an error may quote it: whatever stands before the
// last "@" of its authority (credentials, even malformed ones with a
// space) replaced by "…".
func shownURL(raw string) string {
	prefix, rest := "", raw
	if i := strings.Index(raw, "://"); i >= 0 {
		prefix, rest = raw[:i+3], raw[i+3:]
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		rest = "…@" + rest[at+1:]
	}
	return clipString(prefix + rest)
}
