package secret

import (
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Set is the secrets one run knows of: every value a Policy hid, and the
// ones the run was given (a DSN's password, a RESP token). It scrubs them
// from any later text. The zero Set is empty and ready; a nil *Set scrubs
// nothing. It is safe for concurrent use.
type Set struct {
	mu   sync.RWMutex
	vals map[string]bool
	// sorted are the forms to replace, longest first.
	sorted []string
}

// Add records secrets (empty ones are ignored) with the forms they take in
// URLs and JSON: as given, query- and path-escaped, JSON-escaped.
func (s *Set) Add(raw ...string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vals == nil {
		s.vals = map[string]bool{}
	}
	changed := false
	for _, v := range raw {
		if v == "" || v == Placeholder {
			continue
		}
		for _, f := range forms(v) {
			if f != "" && !s.vals[f] {
				s.vals[f] = true
				changed = true
			}
		}
	}
	if changed {
		s.sorted = s.sorted[:0]
		for f := range s.vals {
			s.sorted = append(s.sorted, f)
		}
		sort.Slice(s.sorted, func(i, j int) bool {
			if len(s.sorted[i]) != len(s.sorted[j]) {
				return len(s.sorted[i]) > len(s.sorted[j])
			}
			return s.sorted[i] < s.sorted[j]
		})
	}
}

// AddValue records a Value's secret.
func (s *Set) AddValue(v Value) { s.Add(v.Reveal()) }

// forms are the ways a secret is written in the texts benchrig produces.
func forms(v string) []string {
	out := []string{v, url.QueryEscape(v), url.PathEscape(v)}
	if b, err := json.Marshal(v); err == nil {
		out = append(out, string(b[1:len(b)-1]))
	}
	return out
}

// Values returns every form the set replaces, longest first.
func (s *Set) Values() []string {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]string(nil), s.sorted...)
}

// Len is the number of forms held (0: nothing to scrub).
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.sorted)
}

// Scrub replaces every secret of the set in text where it stands as a
// whole token (see Scrub).
func (s *Set) Scrub(text string) string {
	if s == nil || text == "" {
		return text
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return Scrub(text, s.sorted...)
}

// Scrub replaces each secret in text with Placeholder where it appears as a
// whole token: an edge of the secret that is a word character (letter,
// digit, underscore) must meet a non-word character or the text's end, so
// a password "x" hides "x" in "user x failed" but leaves "context" alone
// (and so does not tell which words hold it). Longer secrets are replaced
// first; empty ones are ignored.
func Scrub(text string, secrets ...string) string {
	if text == "" || len(secrets) == 0 {
		return text
	}
	ordered := append([]string(nil), secrets...)
	sort.SliceStable(ordered, func(i, j int) bool { return len(ordered[i]) > len(ordered[j]) })
	for _, sec := range ordered {
		if sec == "" || sec == Placeholder {
			continue
		}
		text = replaceToken(text, sec)
	}
	return text
}

// replaceToken replaces the whole-token occurrences of sec in text.
func replaceToken(text, sec string) string {
	if !strings.Contains(text, sec) {
		return text
	}
	first, _ := utf8.DecodeRuneInString(sec)
	last, _ := utf8.DecodeLastRuneInString(sec)
	needLeft, needRight := isWord(first), isWord(last)
	var b strings.Builder
	i := 0
	for {
		j := strings.Index(text[i:], sec)
		if j < 0 {
			break
		}
		j += i
		end := j + len(sec)
		ok := true
		if needLeft && j > 0 {
			r, _ := utf8.DecodeLastRuneInString(text[:j])
			ok = !isWord(r)
		}
		if ok && needRight && end < len(text) {
			r, _ := utf8.DecodeRuneInString(text[end:])
			ok = !isWord(r)
		}
		if ok {
			b.WriteString(text[i:j])
			b.WriteString(Placeholder)
			i = end
			continue
		}
		// Not a token here: keep one byte and look again after it.
		_, size := utf8.DecodeRuneInString(text[j:])
		b.WriteString(text[i : j+size])
		i = j + size
	}
	if i == 0 {
		return text
	}
	b.WriteString(text[i:])
	return b.String()
}

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// scrubbed is an error whose message had secrets removed. Unwrap keeps the
// chain for classification (errors.Is, errors.As); only Error is shown.
type scrubbed struct {
	msg   string
	cause error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.cause }

// Error returns err with the set's secrets scrubbed from its message; err
// itself when its message held none. The chain stays reachable through
// Unwrap for errors.Is and errors.As: print only the returned error.
func (s *Set) Error(err error) error {
	if err == nil || s.Len() == 0 {
		return err
	}
	msg := err.Error()
	clean := s.Scrub(msg)
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, cause: err}
}

// Error returns err with the credentials its message shows redacted by the
// policy (Text: URLs' passwords and secret parameters, secret key=value
// and --flag value pairs), for errors that echo input no Set knew yet (a
// suite's malformed URL); err itself when nothing changed. The chain stays
// reachable through Unwrap.
func (p Policy) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := p.Text(msg, nil); clean != msg {
		return &scrubbed{msg: clean, cause: err}
	}
	return err
}

// IsScrubbed reports whether err's message was scrubbed by a Set.
func IsScrubbed(err error) bool {
	var sc *scrubbed
	return errors.As(err, &sc)
}

// Writer returns a writer that scrubs the set's secrets from every Write
// before passing it on to w (stdout, stderr, a log). A secret split across
// two Writes is not seen: it is the last line of defence, behind the
// redaction at the source. Fd is passed through, so terminal detection
// still works.
func (s *Set) Writer(w io.Writer) io.Writer { return &writer{set: s, w: w} }

type writer struct {
	set *Set
	w   io.Writer
}

func (sw *writer) Write(p []byte) (int, error) {
	if sw.set.Len() == 0 {
		return sw.w.Write(p)
	}
	clean := sw.set.Scrub(string(p))
	if _, err := io.WriteString(sw.w, clean); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Fd is the file descriptor of the underlying writer, when it has one.
func (sw *writer) Fd() uintptr {
	if f, ok := sw.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}
