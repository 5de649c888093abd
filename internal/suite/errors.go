package suite

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/benchrig/benchrig/internal/textclip"
)

// maxErrors bounds how many problems one Parse or ApplyOverrides reports: past
// that, the first ones are what the user needs to read.
const maxErrors = 20

// Error is one problem found in a suite. It says where the bad value came from
// (the file position, or the environment variable or --set flag that set it),
// which field it is, and what is accepted.
type Error struct {
	// File is the suite file name as given to Parse or Load.
	File string
	// Line and Column locate the value in File, 1-based; both are 0 when the
	// problem has no position (an override, or an empty file).
	Line, Column int
	// Source names the override that set the value, for example
	// `CONNECTIONS="4,x"` or `--set rates=0`; empty for values from the file.
	Source string
	// Field is the path of the value in the suite, for example
	// "matrix.connections[1]" or "targets.go-hello.command"; empty for the
	// document itself.
	Field string
	// Msg says what is wrong and what is accepted.
	Msg string
}

// Error formats the problem as `file:line:col: field: msg`, or
// `SOURCE: field: msg` for a value set by an override.
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.Source != "":
		b.WriteString(e.Source)
	case e.Line > 0:
		fmt.Fprintf(&b, "%s:%d:%d", e.File, e.Line, e.Column)
	default:
		b.WriteString(e.File)
	}
	if e.Field != "" {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(e.Field)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one pass, in file order; values set by
// overrides come last. It is what Parse, Load and ApplyOverrides return when
// the suite is invalid.
type Errors []*Error

// Error formats one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes each *Error to errors.As and errors.Is.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// pos is a 1-based position in the suite file.
type pos struct{ line, col int }

// located collects problems and knows where each field of the suite came from.
type located struct {
	file string
	// at maps a field path to the position of its value (of its key, for
	// mappings and lists).
	at map[string]pos
	// overridden maps a field path to the override that last set it.
	overridden map[string]string
	// quoted marks the scalar fields written in quotes: their text starts
	// one column after their position.
	quoted map[string]bool
	errs   Errors
}

func newLocated(file string) *located {
	return &located{file: file, at: map[string]pos{}, overridden: map[string]string{}, quoted: map[string]bool{}}
}

// errf records a problem with the value at field path.
func (l *located) errf(field, format string, args ...any) {
	if len(l.errs) >= maxErrors {
		return
	}
	e := &Error{File: l.file, Field: field, Msg: fmt.Sprintf(format, textclip.Args(args)...)}
	if src := l.sourceOf(field); src != "" {
		e.Source = src
	} else if p, ok := l.find(field); ok {
		e.Line, e.Column = p.line, p.col
	}
	l.errs = append(l.errs, e)
}

// errOff records a problem at byte offset off inside the single-line
// string value of field (an assertion, a query): the column points at the
// offending character. A value spread over lines is located at its start.
func (l *located) errOff(field, text string, off int, format string, args ...any) {
	if len(l.errs) >= maxErrors {
		return
	}
	e := &Error{File: l.file, Field: field, Msg: fmt.Sprintf(format, textclip.Args(args)...)}
	if src := l.sourceOf(field); src != "" {
		e.Source = src
	} else if p, ok := l.find(field); ok {
		e.Line, e.Column = p.line, p.col
		if _, exact := l.at[field]; exact && !strings.ContainsAny(text, "\n\\") && off >= 0 && off <= len(text) {
			e.Column += utf8.RuneCountInString(text[:off])
			if l.quoted[field] {
				e.Column++
			}
		}
	}
	l.errs = append(l.errs, e)
}

// Where formats the position of a suite field as "file:line:col" (or
// names the override that set it), with the column moved to byte offset
// off of its single-line text; for errors found after planning (a
// statistics query the server refuses, a name it does not return).
func (s *Suite) Where(field, text string, off int) string {
	l := s.loc
	if l == nil {
		return s.Source.File
	}
	tmp := &located{file: l.file, at: l.at, overridden: l.overridden, quoted: l.quoted}
	tmp.errOff(field, text, off, "x")
	e := tmp.errs[0]
	e.Msg, e.Field = "", ""
	return strings.TrimSuffix(e.Error(), ": ")
}

// errAt records a problem at an explicit position (used while decoding, when
// the node is at hand).
func (l *located) errAt(p pos, field, format string, args ...any) {
	if len(l.errs) >= maxErrors {
		return
	}
	l.errs = append(l.errs, &Error{File: l.file, Line: p.line, Column: p.col, Field: field, Msg: fmt.Sprintf(format, textclip.Args(args)...)})
}

// find returns the position of field, or of its nearest ancestor that has one.
func (l *located) find(field string) (pos, bool) {
	for {
		if p, ok := l.at[field]; ok {
			return p, true
		}
		if field == "" {
			return pos{}, false
		}
		field = parentPath(field)
	}
}

// sourceOf names the override that set field or one of its ancestors.
func (l *located) sourceOf(field string) string {
	for {
		if s, ok := l.overridden[field]; ok {
			return s
		}
		if field == "" {
			return ""
		}
		field = parentPath(field)
	}
}

// result returns the collected problems sorted by position (overrides last),
// or nil.
func (l *located) result() error {
	if len(l.errs) == 0 {
		return nil
	}
	es := append(Errors(nil), l.errs...)
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if (a.Source == "") != (b.Source == "") {
			return a.Source == ""
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return es
}

// parentPath strips the last segment of a field path: "a.b[2]" → "a.b",
// "a.b" → "a", "a" → "".
func parentPath(field string) string {
	i := strings.LastIndexAny(field, ".[")
	if i < 0 {
		return ""
	}
	return field[:i]
}

// child joins a field path and a key.
func child(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// index joins a field path and a list index.
func index(field string, i int) string {
	return fmt.Sprintf("%s[%d]", field, i)
}
