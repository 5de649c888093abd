package secret

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
)

// FuzzScrub checks the whole-token rule on any text and secret: the result
// never holds the secret as a whole token, text without the secret is left
// unchanged, and a secret inside a longer word stays put. Allocation is
// bounded by the input's size (internal/fuzzcheck).
func FuzzScrub(f *testing.F) {
	f.Add("password x rejected in context", "x")
	f.Add("u:p@ss@h", "p@ss")
	f.Add("xxx xxx", "xxx ")
	f.Add("[redacted] redacted", "redacted")
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, text, sec string) {
		if len(text) > 4096 || len(sec) > 256 || !utf8.ValidString(text) || !utf8.ValidString(sec) {
			return
		}
		fuzzcheck.Bound(t, len(text)+len(sec), func() {
			got := Scrub(text, sec)
			if !strings.Contains(text, sec) || sec == "" || sec == Placeholder {
				if got != text {
					t.Fatalf("Scrub(%q, %q) = %q changed a text without the secret", text, sec, got)
				}
				return
			}
			// What is left must not hold the secret as a whole token,
			// unless it is made of the placeholder's own characters.
			if again := Scrub(strings.ReplaceAll(got, Placeholder, "\x00"), sec); again != strings.ReplaceAll(got, Placeholder, "\x00") &&
				!strings.ContainsAny(sec, "\x00") && !strings.Contains(Placeholder, strings.Trim(sec, "\x00")) {
				t.Fatalf("Scrub(%q, %q) = %q still holds the secret as a token", text, sec, got)
			}
		})
	})
}

// FuzzText redacts a planted password in every URL and flag form Text
// knows, inside any surrounding text, and fails when it shows. Allocation
// is bounded by the input's size (internal/fuzzcheck).
func FuzzText(f *testing.F) {
	f.Add("s3cret", "error: ")
	f.Add("p@ss/w:rd", "GET ")
	f.Add("a b", "x=")
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, pw, around string) {
		if len(pw) < 6 || len(pw) > 128 || len(around) > 1024 || strings.ContainsAny(pw, " \t\n\r\f\v\"'<>`\x00@/?#&;=,%[]()\\") ||
			strings.ContainsAny(around, "\x00") || strings.Contains(around, pw) || strings.Contains(Placeholder, pw) || strings.HasPrefix(pw, "--") {
			return
		}
		fuzzcheck.Bound(t, len(pw)+len(around), func() {
			for _, text := range []string{
				around + " https://u:" + pw + "@h/x " + around,
				around + " u:" + pw + "@127.0.0.1:8080/x " + around,
				around + " http://h/x?access_token=" + pw + "&q=1 " + around,
				around + " --db-password " + pw + " --port 1 " + around,
				around + " --password=" + pw + " " + around,
				around + " API_KEY=" + pw + " " + around,
			} {
				var found Set
				out := Policy{}.Text(text, &found)
				if strings.Contains(strings.ReplaceAll(out, Placeholder, "\x00"), pw) {
					t.Fatalf("Text(%q) = %q still holds %q", text, out, pw)
				}
			}
		})
	})
}
