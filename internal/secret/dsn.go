package secret

import "strings"

// DSN returns a connection string with its credentials hidden, in URL form
// (postgres://user:pw@host/db?password=pw, redis://:pw@host) through URL,
// and in libpq's key=value form (host=h password='se cret') by the policy's
// names. It never fails: text it cannot parse is redacted generously (a
// malformed tail that mentions a secret name is hidden whole). Every value
// hidden is added to found (which may be nil).
func (p Policy) DSN(dsn string, found *Set) string {
	if schemeEnd(dsn) > 0 {
		return p.URL(dsn, found)
	}
	return p.keyValue(dsn, found)
}

// keyValue hides the values of secret keys in libpq's key=value form: keys
// and values separated by '=' with optional spaces, values either bare or
// single-quoted with backslash escapes. From a malformed pair on, the rest
// of the string is hidden unless it holds no secret name at all.
func (p Policy) keyValue(dsn string, found *Set) string {
	var b strings.Builder
	i, n := 0, len(dsn)
	for i < n {
		j := i
		for j < n && isSpace(dsn[j]) {
			j++
		}
		b.WriteString(dsn[i:j])
		i = j
		if i >= n {
			break
		}
		for j < n && dsn[j] != '=' && !isSpace(dsn[j]) {
			j++
		}
		key := dsn[i:j]
		k := j
		for k < n && isSpace(dsn[k]) {
			k++
		}
		if k >= n || dsn[k] != '=' {
			return b.String() + p.rest(dsn[i:], found)
		}
		k++
		for k < n && isSpace(dsn[k]) {
			k++
		}
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
				return b.String() + p.rest(dsn[i:], found)
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
		if p.Name(key) {
			b.WriteString(Placeholder)
			if found != nil {
				found.Add(dsn[k:v], unquote(dsn[k:v]))
			}
		} else {
			b.WriteString(dsn[k:v])
		}
		i = v
	}
	return b.String()
}

// unquote undoes libpq's single quotes and backslash escapes.
func unquote(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		v = v[1 : len(v)-1]
	}
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// rest hides a malformed tail when it mentions a secret name.
func (p Policy) rest(s string, found *Set) string {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '=' || r == '\'' }) {
		if p.Name(w) {
			if found != nil {
				if _, v, ok := strings.Cut(s, "="); ok {
					found.Add(strings.TrimSpace(v), unquote(strings.TrimSpace(v)))
				}
			}
			return Placeholder
		}
	}
	return s
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
