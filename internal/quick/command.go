package quick

import (
	"fmt"
	"strings"
)

// SplitCommand splits a command line into argv the way a shell would for
// simple cases: whitespace separates words, single quotes keep everything,
// double quotes keep everything but \" and \\, a backslash escapes the next
// character. Anything else a shell would do (variables, globs, pipes) is not
// done: use sh -c '…' for that.
func SplitCommand(s string) ([]string, error) {
	var (
		argv []string
		cur  strings.Builder
		in   bool // inside a word
		q    rune // current quote
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case q == '\'':
			if r == '\'' {
				q = 0
			} else {
				cur.WriteRune(r)
			}
		case q == '"':
			if r == '"' {
				q = 0
			} else if r == '\\' && i+1 < len(rs) && (rs[i+1] == '"' || rs[i+1] == '\\') {
				i++
				cur.WriteRune(rs[i])
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			q, in = r, true
		case r == '\\':
			if i+1 < len(rs) {
				i++
				cur.WriteRune(rs[i])
				in = true
			}
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				argv = append(argv, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if q != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", q, s)
	}
	if in {
		argv = append(argv, cur.String())
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	return argv, nil
}
