package secret

import (
	"net/url"
	"strings"
)

// URL returns raw with its credentials hidden: the password of the
// userinfo, and the value of every query (or fragment) parameter whose name
// the policy calls secret, the name kept (?access_token=[redacted]). It
// works on text, not on a parsed URL, so https://, other schemes,
// scheme-less ("u:pw@host:80/x") and malformed URLs (a bad port, spaces,
// an unencoded '@', '/' or '?' in the password) are all redacted; it never
// fails. Every value hidden is added to found (which may be nil).
func (p Policy) URL(raw string, found *Set) string {
	if raw == "" {
		return raw
	}
	var b strings.Builder
	rest := raw
	if i := schemeEnd(raw); i > 0 {
		b.WriteString(raw[:i])
		rest = raw[i:]
	} else if strings.HasPrefix(raw, "//") {
		b.WriteString("//")
		rest = raw[2:]
	}
	rest = p.userinfo(&b, rest, libpqURL(raw), found)
	// Path, then query and fragment.
	cut := strings.IndexAny(rest, "?#")
	if cut < 0 {
		b.WriteString(rest)
		return b.String()
	}
	b.WriteString(rest[:cut])
	rest = rest[cut:]
	for rest != "" {
		sep := rest[0] // '?' or '#'
		b.WriteByte(sep)
		rest = rest[1:]
		end := len(rest)
		if sep == '?' {
			if h := strings.IndexByte(rest, '#'); h >= 0 {
				end = h
			}
		}
		b.WriteString(p.query(rest[:end], found))
		rest = rest[end:]
	}
	return b.String()
}

// schemeEnd returns the index just past "scheme://" when raw begins with a
// scheme, else 0.
func schemeEnd(raw string) int {
	i := strings.Index(raw, "://")
	if i <= 0 {
		return 0
	}
	for j, c := range raw[:i] {
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !(alpha || j > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return 0
		}
	}
	return i + 3
}

// libpqURL says whether raw is a PostgreSQL URL, whose userinfo libpq (and
// pgx) take to end at the first '@' before any '/'.
func libpqURL(raw string) bool {
	scheme, _, _ := strings.Cut(raw, "://")
	return strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql")
}

// userinfo writes the authority's userinfo with its password hidden and
// returns what follows it. The userinfo is taken to end at the last '@'
// before the query, so that an unencoded '@', '/' or ':' in a password is
// hidden too; an '@' after a '/' that follows no ':' is a path's. In a
// PostgreSQL URL (libpq), the userinfo ends instead at the first '@' before
// any '/', even one past a '?' or '#' (postgres://u:p#&x@h is user u,
// password "p#&x"): the farther of the two ends is taken.
func (p Policy) userinfo(b *strings.Builder, rest string, libpq bool, found *Set) string {
	head := rest
	if q := strings.IndexAny(rest, "?#"); q >= 0 {
		head = rest[:q]
	}
	at := strings.LastIndexByte(head, '@')
	if at < 0 {
		// An unencoded '?' or '#' in the password: u:pa?ss@host.
		if c := strings.IndexByte(head, ':'); c >= 0 && !strings.Contains(head[:c], "/") {
			if a := strings.IndexByte(rest[len(head):], '@'); a >= 0 && !strings.ContainsAny(rest[len(head):len(head)+a], "=&") {
				at = len(head) + a
			}
		}
	}
	if libpq {
		if i := strings.IndexAny(rest, "@/"); i > at && rest[i] == '@' {
			at = i
		}
	}
	if at < 0 {
		return rest
	}
	ui := rest[:at]
	if slash := strings.IndexByte(ui, '/'); slash >= 0 {
		if c := strings.IndexByte(ui, ':'); c < 0 || c > slash {
			return rest // http://h/path@x: a path, no userinfo
		}
	}
	user, pw, hasPW := strings.Cut(ui, ":")
	b.WriteString(user)
	if hasPW {
		b.WriteString(":" + Placeholder)
		addEscaped(found, pw)
	}
	return rest[at:]
}

// query writes a query (or fragment) with the values of secret parameters
// hidden; parameters are split at '&' and ';'.
func (p Policy) query(q string, found *Set) string {
	if !strings.Contains(q, "=") {
		return q
	}
	var b strings.Builder
	start := 0
	for i := 0; i <= len(q); i++ {
		if i < len(q) && q[i] != '&' && q[i] != ';' {
			continue
		}
		kv := q[start:i]
		k, v, hasV := strings.Cut(kv, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasV && v != Placeholder && p.Param(name) {
			b.WriteString(k + "=" + Placeholder)
			addEscaped(found, v)
		} else {
			b.WriteString(kv)
		}
		if i < len(q) {
			b.WriteByte(q[i])
		}
		start = i + 1
	}
	return b.String()
}

// addEscaped adds a value as written and unescaped.
func addEscaped(found *Set, v string) {
	if found == nil || v == "" || v == Placeholder {
		return
	}
	found.Add(v)
	if u, err := url.QueryUnescape(v); err == nil && u != v {
		found.Add(u)
	}
	if u, err := url.PathUnescape(v); err == nil && u != v {
		found.Add(u)
	}
}
