package secret

import (
	"regexp"
	"strings"
)

var (
	// urlRE finds URLs in free text: scheme://, then up to a space or quote.
	urlRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'<>` + "`" + `]*`)
	// userinfoRE finds scheme-less credentials in free text: user:pw@host.
	userinfoRE = regexp.MustCompile(`(^|[\s"'(=,<\[])([^\s"'@/:=(),<>\[\]]*):([^\s"'@]+)@([A-Za-z0-9.\-\[\]]+)`)
	// assignRE finds key=value pairs in free text; the
	// value is single- or double-quoted, or runs to a space, '&', ';' or ','.
	assignRE = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.\-]*)(=)('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s&;,"']+)`)
	// flagPairRE finds "--name value" in free text; a value may begin with
	// one dash, not two (that is the next flag).
	flagPairRE = regexp.MustCompile(`(^|\s)(--?[A-Za-z][A-Za-z0-9_\-]*)(\s+)([^\s\-]\S*|-[^\s\-]\S*|-)(\s|$)`)
)

// Text returns free text (an error message, a log line, a command line
// written as one string) with the credentials it holds hidden: URLs'
// userinfo passwords and secret parameters (any scheme, or none), the
// values of secret-named key=value and "--flag value" pairs.
// Every value hidden is added to found (which may be nil).
func (p Policy) Text(s string, found *Set) string {
	if s == "" {
		return s
	}
	s = urlRE.ReplaceAllStringFunc(s, func(u string) string { return p.URL(u, found) })
	if strings.Contains(s, "@") {
		s = userinfoRE.ReplaceAllStringFunc(s, func(m string) string {
			g := userinfoRE.FindStringSubmatch(m)
			if g[3] == Placeholder || strings.HasPrefix(g[3], "//") {
				return m
			}
			addEscaped(found, g[3])
			return g[1] + g[2] + ":" + Placeholder + "@" + g[4]
		})
	}
	s = p.assignments(s, found)
	return p.flagPairs(s, found)
}

// flagPairs hides the values of secret-named "--flag value" pairs. The scan
// resumes at the whitespace after each value, not past it, so that a pair
// right after another ("-A 0 --db-password X") is seen too.
func (p Policy) flagPairs(s string, found *Set) string {
	var b strings.Builder
	i := 0
	for i < len(s) {
		m := flagPairRE.FindStringSubmatchIndex(s[i:])
		if m == nil {
			break
		}
		name, val := s[i+m[4]:i+m[5]], s[i+m[8]:i+m[9]]
		b.WriteString(s[i : i+m[8]])
		if p.Name(name) && val != Placeholder {
			if found != nil {
				found.Add(val, strings.Trim(val, `'"`))
			}
			b.WriteString(Placeholder)
		} else {
			b.WriteString(val)
		}
		i += m[9] // the separator after the value starts the next search
	}
	b.WriteString(s[i:])
	return b.String()
}

// assignments hides the values of secret-named key=value pairs. A pair
// whose key is not secret is stepped over by its key only, so a quoted
// value cannot hide a secret pair inside it from the scan.
func (p Policy) assignments(s string, found *Set) string {
	var b strings.Builder
	i := 0
	for i < len(s) {
		m := assignRE.FindStringSubmatchIndex(s[i:])
		if m == nil {
			break
		}
		key, val := s[i+m[2]:i+m[3]], s[i+m[6]:i+m[7]]
		if !p.Name(key) || val == Placeholder || strings.HasPrefix(val, "//") {
			b.WriteString(s[i : i+m[5]])
			i += m[5]
			continue
		}
		if found != nil {
			found.Add(val, unquote(strings.Trim(val, `"`)))
		}
		b.WriteString(s[i:i+m[6]] + Placeholder)
		i += m[7]
	}
	if i == 0 {
		return s
	}
	b.WriteString(s[i:])
	return b.String()
}

// bareDirectives are argv words after which the next word is a secret,
// although they have no dashes (redis-server's "requirepass pw").
var bareDirectives = map[string]bool{"requirepass": true, "masterauth": true}

// Argv returns a copy of a command's arguments with credentials hidden:
// the value of a secret-named flag in both forms (--db-password=x and
// --db-password x), secret NAME=value words, and credentials inside any
// other argument (URLs, DSNs, key=value text). A one-letter flag (-p x)
// counts only when its name is on the policy. Every value hidden is added
// to found (which may be nil).
func (p Policy) Argv(argv []string, found *Set) []string {
	if argv == nil {
		return nil
	}
	out := make([]string, len(argv))
	hideNext := false
	for i, a := range argv {
		name, val, hasEq := strings.Cut(a, "=")
		isFlag := strings.HasPrefix(a, "-") && len(strings.TrimLeft(name, "-")) > 0
		switch {
		case hideNext && !(strings.HasPrefix(a, "--") && len(a) > 2):
			out[i] = Placeholder
			found.Add(a)
			hideNext = false
		case isFlag && hasEq && p.Name(name):
			out[i] = name + "=" + Placeholder
			found.Add(val)
		case isFlag && !hasEq && p.Name(name):
			out[i] = a
			hideNext = true
		case !isFlag && !hasEq && bareDirectives[strings.ToLower(a)]:
			out[i] = a
			hideNext = true
		case !isFlag && hasEq && IsEnvName(name) && p.Name(name):
			out[i] = name + "=" + Placeholder
			found.Add(val)
		default:
			hideNext = false
			out[i] = p.Text(a, found)
		}
	}
	return out
}

// IsEnvName reports whether s can be an environment variable's name:
// letters, digits and _, not starting with a digit.
func IsEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Env returns a copy of NAME=value entries with credentials hidden: the
// whole value of a secret-named variable, and credentials inside any other
// value (DATABASE_URL=postgres://u:pw@h/db). Every value hidden is added to
// found (which may be nil).
func (p Policy) Env(env []string, found *Set) []string {
	if env == nil {
		return nil
	}
	out := make([]string, len(env))
	for i, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		out[i] = kv
		if ok {
			out[i] = k + "=" + p.EnvValue(k, v, found)
		}
	}
	return out
}

// EnvValue is one environment value as Env shows it.
func (p Policy) EnvValue(name, value string, found *Set) string {
	if value == "" {
		return value
	}
	if p.Name(name) {
		found.Add(value)
		return Placeholder
	}
	return p.DSNText(value, found)
}

// DSNText is Text for a value that may be a whole DSN in key=value form
// (host=h password=x), which Text alone would miss inside quotes.
func (p Policy) DSNText(v string, found *Set) string {
	if schemeEnd(v) == 0 && strings.Contains(v, "=") && !strings.ContainsAny(v, "&?") {
		v = p.keyValue(v, found)
	}
	return p.Text(v, found)
}

// HeaderValue is a header's value as recorded: Placeholder for a secret
// header, otherwise the value with credentials inside it hidden.
func (p Policy) HeaderValue(name, value string, found *Set) string {
	if p.Header(name) {
		found.Add(value)
		if _, tok, ok := strings.Cut(strings.TrimSpace(value), " "); ok {
			found.Add(strings.TrimSpace(tok)) // Bearer TOKEN: the token alone
		}
		return Placeholder
	}
	return p.Text(value, found)
}

// Headers returns a copy of a header map with HeaderValue applied.
func (p Policy) Headers(h map[string]string, found *Set) map[string]string {
	if h == nil {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[k] = p.HeaderValue(k, v, found)
	}
	return out
}

// HeaderLine redacts one "Name: value" line (a -H argument).
func (p Policy) HeaderLine(line string, found *Set) string {
	k, v, ok := strings.Cut(line, ":")
	if !ok {
		return p.Text(line, found)
	}
	shown := p.HeaderValue(strings.TrimSpace(k), strings.TrimSpace(v), found)
	if shown == strings.TrimSpace(v) {
		return line
	}
	return k + ": " + shown
}
