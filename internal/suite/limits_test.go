package suite_test

import (
	"strings"
	"testing"
	"unicode/utf16"

	_ "github.com/benchrig/benchrig/internal/protocol/all"
	. "github.com/benchrig/benchrig/internal/suite"
)

// firstErr parses data and returns its first problem's message ("" when it
// parses).
func firstErr(t *testing.T, data []byte) string {
	t.Helper()
	_, err := Parse("s.yaml", data)
	if err == nil {
		return ""
	}
	es, ok := err.(Errors)
	if !ok || len(es) == 0 {
		t.Fatalf("error %T: %v", err, err)
	}
	return es[0].Error()
}

// TestParserLimits checks the bounds a suite's bytes meet before parsing:
// size, nesting, indentation and encoding, each refused early with a message
// that states it; and that ordinary nesting, quoted brackets, comments and
// block scalars are not counted as nesting.
func TestParserLimits(t *testing.T) {
	utf16le := func(s string) []byte {
		b := []byte{0xFF, 0xFE}
		for _, u := range utf16.Encode([]rune(s)) {
			b = append(b, byte(u), byte(u>>8))
		}
		return b
	}
	var nodash strings.Builder
	nodash.WriteString(okHead + okMatrix + "x:\n")
	for i := 0; i < 500; i++ {
		nodash.WriteString(strings.Repeat(" ", i+1) + "-\n")
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want string // a substring of the first error
	}{
		{"100k nested [", []byte("name: " + strings.Repeat("[", 100000)), "s.yaml:1:107: nesting deeper than 100 levels of [ and {, the bound of a suite"},
		{"nested {", []byte("name: t\nx: " + strings.Repeat("{a: ", 200)), "nesting deeper than 100 levels"},
		{"nested dashes", []byte("x: \n  " + strings.Repeat("- ", 200) + "1\n"), "nesting deeper than 100 levels of block sequences on one line"},
		{"deep indentation", []byte(nodash.String()), "line is indented by more than 400 columns"},
		{"5 MiB", []byte(okHead + okMatrix + "# " + strings.Repeat("x", 5<<20) + "\n"), "file is larger than the bound of a suite file (4194304 bytes, 4 MiB): 5243067 bytes or more"},
		{"UTF-16 LE with BOM", utf16le(okHead + okMatrix), "s.yaml:1:1: file is not UTF-8 text: it starts with a UTF-16 byte-order mark"},
		{"UTF-16 without BOM", utf16le(okHead + okMatrix)[2:], "file is not UTF-8 text: it holds a NUL byte at offset 1"},
		{"Latin-1", []byte("name: caf\xe9\n"), "s.yaml:1:10: file is not UTF-8 text: invalid byte 0xe9 at offset 9"},
		{"rates 1e308", []byte(okHead + okMatrix + "  rates: [1e308]\n"), "matrix.rates[0]: must be between 0.001 and 10000000 requests per second, got 1e+308"},
		{"rates 1e309", []byte(okHead + okMatrix + "  rates: [1e309]\n"), "must be a finite number, got 1e309 (out of range)"},
		{"rates 1.5e309", []byte(okHead + okMatrix + "  rates: [1.5e309]\n"), "must be a finite number, got 1.5e309 (out of range)"},
		{"quoted 1e3 stays a string", []byte(okHead + okMatrix + "  rates: [\"1e3\"]\n"), `must be a number, got string "1e3"`},
		{"90 levels", []byte(okHead + okMatrix + "x: " + strings.Repeat("[", 90) + strings.Repeat("]", 90) + "\n"), `unknown key "x"`},
		{"brackets in quotes, comments, plain scalars and block scalars", []byte(okHead + okMatrix +
			"x: \"" + strings.Repeat("[", 200) + "\" # " + strings.Repeat("{", 200) + "\n" +
			"y: a" + strings.Repeat("[", 200) + "\nz: |\n  " + strings.Repeat("[", 200) + "\n  more\nw: '" + strings.Repeat("{", 200) + "'\n"), `unknown key "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := firstErr(t, tc.in); !strings.Contains(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	// Load reads no more than one byte past the bound.
	if _, err := Load("/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero: file is larger than the bound of a suite file (4194304 bytes, 4 MiB): 4194305 bytes or more") {
		t.Fatalf("Load(/dev/zero): %v", err)
	}
	// 1e308 is a number: the message is the rate's bound, not its type.
	if got := firstErr(t, []byte(okHead+okMatrix+"  rates: [1e308]\n")); strings.Contains(got, "must be a number") || strings.Contains(got, "string") {
		t.Fatalf("1e308: %q", got)
	}
	// and 1e3 is a rate of 1000 requests per second.
	if got := firstErr(t, []byte(okHead+okMatrix+"  rates: [1e3]\n")); got != "" {
		t.Fatalf("1e3: %q", got)
	}
}
