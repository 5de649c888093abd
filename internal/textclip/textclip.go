// Package textclip shortens user-supplied text before a message quotes it:
// a 200 MB key, a 3 MB suite value or a server's endless error line is
// named by its head and its length, never echoed whole.
package textclip

import (
	"fmt"
	"unicode/utf8"
)

// Max is the longest text a message quotes whole, in bytes.
const Max = 256

// String returns s when it is at most Max bytes, else its first Max bytes
// (cut at a character boundary) followed by "…" and the full length.
func String(s string) string {
	if len(s) <= Max {
		return s
	}
	return fmt.Sprintf("%s (%d bytes in all)", Cut(s, Max), len(s))
}

// Cut returns s when it is at most n bytes, else its first n bytes (cut at
// a character boundary) followed by "…".
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Args returns args with every string longer than Max clipped by String,
// for fmt.Sprintf(format, Args(args)...): %q of a clipped value quotes its
// head and says how long it was.
func Args(args []any) []any {
	var out []any
	for i, a := range args {
		s, ok := a.(string)
		if !ok || len(s) <= Max {
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = String(s)
	}
	if out == nil {
		return args
	}
	return out
}
