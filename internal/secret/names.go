package secret

import (
	"strings"
	"unicode"
)

// stems are the word parts that mark a credential's name. A word of a name
// is a credential's when it is a stem, or ends with one (apikey,
// accesstoken, pgpassword, oauth), optionally with a plural s.
var stems = []string{"token", "key", "secret", "password", "passwd", "pwd", "auth", "session", "signature", "credential", "cookie"}

// prefixStems also mark a word they begin (sessionid, passwordfile,
// secretkey); "token" and "key" do not (tokenizer, keyspace).
var prefixStems = []string{"session", "password", "passwd", "secret", "credential", "signature"}

// innerStems mark a word wherever they stand in it (JSESSIONID, PHPSESSID,
// xpasswordx).
var innerStems = []string{"session", "sessid", "password", "passwd"}

// wholeWords are credentials' words only when they are the whole word
// (pass, but not bypass or passenger; authorization but not author).
var wholeWords = map[string]bool{
	"pass": true, "sig": true, "authorization": true, "authentication": true, "authn": true, "authz": true,
	"requirepass": true, "masterauth": true, "bearer": true,
}

// referenceWords end names whose value says where a credential is, not the
// credential itself: --token-env REDIS_PASSWORD, PASSWORD_FILE=/run/pw,
// --tls-key-path.
var referenceWords = map[string]bool{"env": true, "file": true, "path": true, "dir": true, "var": true, "variable": true, "name": true}

// Words splits a name into lower-case words at every character that is not
// a letter or digit and at camel-case humps: "X-Upstream-Key" → x upstream
// key, "accessToken" → access token, "HTTPAuthKey" → http auth key.
func Words(name string) []string {
	var words []string
	rs := []rune(name)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, strings.ToLower(string(rs[start:end])))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		switch {
		case unicode.IsLower(prev) && unicode.IsUpper(r):
			flush(i) // accessToken
			start = i
		case unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			flush(i) // HTTPAuth → HTTP Auth
			start = i
		}
	}
	flush(len(rs))
	return words
}

// secretWord reports whether one lower-case word marks a credential.
func secretWord(w string) bool {
	if wholeWords[w] {
		return true
	}
	for _, s := range stems {
		if strings.HasSuffix(w, s) || strings.HasSuffix(w, s+"s") {
			return true
		}
	}
	for _, s := range prefixStems {
		if strings.HasPrefix(w, s) {
			return true
		}
	}
	for _, s := range innerStems {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// IsSecretName reports whether a header, query parameter, environment
// variable or flag of this name holds a credential under the default
// policy: one of its words (see Words) is or ends with token, key, secret,
// password, passwd, pwd, auth, session, signature, credential or cookie, or
// is pass, sig, authorization, requirepass…, unless its last word says the
// value is a reference (env, file, path, dir, var, variable, name). Case
// does not matter.
func IsSecretName(name string) bool {
	words := Words(name)
	if len(words) > 1 && referenceWords[words[len(words)-1]] {
		return false // --token-env NAME, PASSWORD_FILE=path: where, not what
	}
	for _, w := range words {
		if secretWord(w) {
			return true
		}
	}
	return false
}

// Policy is the redaction policy of one run: the default rule of
// IsSecretName plus the header and parameter names a suite or the command
// line adds (--secret-header, --secret-param). The zero Policy is the
// default rule alone.
type Policy struct {
	headers map[string]bool // lower-case
	params  map[string]bool // lower-case
}

// NewPolicy returns the default policy widened by extra header and query
// parameter names (compared case-insensitively).
func NewPolicy(headers, params []string) Policy {
	p := Policy{headers: map[string]bool{}, params: map[string]bool{}}
	p.headers, p.params = addNames(nil, headers), addNames(nil, params)
	return p
}

func addNames(m map[string]bool, names []string) map[string]bool {
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" {
			if m == nil {
				m = map[string]bool{}
			}
			m[strings.ToLower(n)] = true
		}
	}
	return m
}

// With returns p widened by more header and parameter names.
func (p Policy) With(headers, params []string) Policy {
	out := Policy{headers: map[string]bool{}, params: map[string]bool{}}
	for k := range p.headers {
		out.headers[k] = true
	}
	for k := range p.params {
		out.params[k] = true
	}
	out.headers, out.params = addNames(out.headers, headers), addNames(out.params, params)
	return out
}

// Header reports whether a header of this name holds a credential.
func (p Policy) Header(name string) bool {
	return IsSecretName(name) || p.headers[strings.ToLower(strings.TrimSpace(name))]
}

// Param reports whether a query parameter of this name holds a credential.
func (p Policy) Param(name string) bool {
	return IsSecretName(name) || p.params[strings.ToLower(strings.TrimSpace(name))]
}

// Name reports whether an environment variable, flag or key=value key of
// this name holds a credential: the default rule, or a name added as a
// header or a parameter. Leading dashes of a flag are ignored.
func (p Policy) Name(name string) bool {
	bare := strings.TrimLeft(strings.TrimSpace(name), "-")
	n := strings.ToLower(bare)
	return IsSecretName(bare) || p.headers[n] || p.params[n]
}
