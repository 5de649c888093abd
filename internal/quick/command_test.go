package quick

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
)

// shellQuote quotes one word for SplitCommand (and sh): single quotes, a
// single quote inside as '\”.
func shellQuote(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// FuzzSplitCommand checks that SplitCommand never panics, that an error
// says something, and that any argv it returns round-trips: every word
// quoted and joined splits back to the same argv. Allocation per input is
// within the fuzzcheck bound (the splitter is linear in its input).
func FuzzSplitCommand(f *testing.F) {
	fuzzcheck.Limit()
	for _, s := range []string{
		"./srv --port 8080",
		`sh -c 'exec ./srv "$PORT"'`,
		`a\ b "c \"d\" \\e" 'f'"g"`,
		"'unterminated",
		"\t\n ",
		"x ''",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzcheck.Bound(t, len(s), func() {
			argv, err := SplitCommand(s)
			if err != nil {
				if err.Error() == "" || argv != nil {
					t.Fatalf("error %q with argv %q", err, argv)
				}
				return
			}
			if len(argv) == 0 {
				t.Fatal("no error and no words")
			}
			if !utf8.ValidString(s) {
				return // invalid bytes become U+FFFD: not a round trip
			}
			q := make([]string, len(argv))
			for i, w := range argv {
				q[i] = shellQuote(w)
			}
			back, err := SplitCommand(strings.Join(q, " "))
			if err != nil || !reflect.DeepEqual(back, argv) {
				t.Fatalf("%q split to %q; quoted again it splits to %q (%v)", s, argv, back, err)
			}
		})
	})
}

// TestSplitCommand pins the splitting rules.
func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{"./srv --port 8080", []string{"./srv", "--port", "8080"}, ""},
		{`a\ b "c \"d\" \\e" 'f'"g"`, []string{"a b", `c "d" \e`, "fg"}, ""},
		{"x ''", []string{"x", ""}, ""},
		{"'open", nil, "unterminated ' quote"},
		{"  ", nil, "empty command"},
	} {
		got, err := SplitCommand(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: got %q, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
