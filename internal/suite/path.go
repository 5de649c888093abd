package suite

import (
	"regexp"
	"strings"
	"time"
)

var headerKeyRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// pathKey reports whether k is a protocol's path key: a lower-case letter,
// then at most 31 lower-case letters and digits (a regexp's {0,31} cost
// every command start-up time to compile).
func pathKey(k string) bool {
	if len(k) == 0 || len(k) > 32 || k[0] < 'a' || k[0] > 'z' {
		return false
	}
	for i := 1; i < len(k); i++ {
		if c := k[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// checkHeaders checks the HTTP headers at field: names are tokens, and a
// value is one line (a CR or LF would end the header and start another in
// the request: run would refuse it, so plan does, at its position).
func (l *located) checkHeaders(field string, headers map[string]string) {
	for _, k := range sortedKeys(headers) {
		f := child(field, k)
		if !headerKeyRE.MatchString(k) {
			l.errf(f, "invalid header name %q", k)
		}
		v := headers[k]
		if i := strings.IndexAny(v, "\r\n"); i >= 0 {
			what := "CR (\\r)"
			if v[i] == '\n' {
				what = "LF (\\n)"
			}
			l.errOff(f, v, i, "header value holds a line break, %s at byte %d of %q: a header value is one line", what, i, v)
		}
	}
}

// pathPlaceholders are the placeholders a path template may use.
var pathPlaceholders = map[string]bool{PortPlaceholder: true, IDPlaceholder: true}

// pathDefaults fills the defaults of a decoded path.
func (s *Suite) pathDefaults(name string, p *Path) {
	if p.Spec != nil {
		p.Spec.Defaults(Field{s.loc, child(child("paths", name), string(p.proto))})
	}
}

func (s *Suite) validatePath(name string, p *Path) {
	l, f := s.loc, child("paths", name)
	l.checkName(f, name)
	accepted := strings.Join(protocolNames(), ", ")
	if p == nil || len(p.given) == 0 {
		l.errf(f, "needs one of %s", accepted)
		return
	}
	l.exclusive(f, p.given, "a path is one request of one protocol")
	if p.Spec != nil {
		p.Spec.Validate(Field{l, child(f, string(p.proto))})
	}
}

// maxTimeout bounds a per-request timeout.
const maxTimeout = Duration(time.Hour)

// checkTimeout checks an optional per-request timeout: 0 (none) to an hour.
func (l *located) checkTimeout(field string, d *Duration) {
	if d != nil && (*d < 0 || *d > maxTimeout) {
		l.errf(field, "must be between 0s (no timeout) and %s, got %s", maxTimeout, *d)
	}
}

// checkPathURL checks a path's URL: http://, https:// or h2c:// (cleartext
// HTTP/2, checked as http://).
func (l *located) checkPathURL(field, raw string) {
	if rest, ok := strings.CutPrefix(raw, "h2c://"); ok {
		raw = "http://" + rest
	}
	l.checkURL(field, raw)
}
