package suite

import (
	"bytes"
	"unicode/utf8"
)

// Bounds checked on a suite's bytes before the YAML parser sees them:
// goccy/go-yaml's parser allocates quadratically in nesting depth (4,000
// nested "[" cost 26 MB, 8,000 cost 100 MB; 100k reached 12.6 GB), so deep
// nesting is refused by a linear scan first.
const (
	// MaxSuiteBytes bounds a suite file.
	MaxSuiteBytes = 4 << 20
	// MaxNesting bounds the nesting of flow collections ([ and {) and of
	// block sequences written on one line ("- - - x").
	MaxNesting = 100
	// MaxIndent bounds a line's indentation, which bounds block nesting.
	MaxIndent = 400
)

// prescan checks data against the bounds above and for text that is not
// UTF-8, recording the first problem in l; it reports whether data may be
// parsed.
func prescan(l *located, data []byte) bool {
	if len(data) > MaxSuiteBytes {
		l.errAt(pos{}, "", "file is larger than the bound of a suite file (%d bytes, 4 MiB): %d bytes or more", MaxSuiteBytes, len(data))
		return false
	}
	switch {
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}), bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		l.errAt(pos{1, 1}, "", "file is not UTF-8 text: it starts with a UTF-16 byte-order mark (save the suite as UTF-8)")
		return false
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		l.errAt(posOf(data, i), "", "file is not UTF-8 text: it holds a NUL byte at offset %d (UTF-16 or binary? save the suite as UTF-8)", i)
		return false
	}
	if !utf8.Valid(data) {
		i := 0
		for i < len(data) {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		l.errAt(posOf(data, i), "", "file is not UTF-8 text: invalid byte 0x%02x at offset %d (save the suite as UTF-8)", data[i], i)
		return false
	}
	return scanNesting(l, data)
}

// posOf is the line and column of byte offset i of data.
func posOf(data []byte, i int) pos {
	line := 1 + bytes.Count(data[:i], []byte("\n"))
	return pos{line, i - bytes.LastIndexByte(data[:i], '\n')}
}

// scanNesting follows YAML's flow collections, quotes and comments closely
// enough to count nesting: a [ or { opens a collection when it starts a
// value (at a line's start, after ": ", "- " or "? ") or inside another flow
// collection; quoted scalars and comments are skipped.
func scanNesting(l *located, data []byte) bool {
	depth := 0
	valueStart := true // the next non-space byte starts a value
	lineStart := true
	indent, lineIndent, dashes := 0, 0, 0
	for i := 0; i < len(data); i++ {
		c := data[i]
		if lineStart {
			if c == ' ' {
				if indent++; indent > MaxIndent {
					l.errAt(posOf(data, i), "", "line is indented by more than %d columns, the bound of a suite's nesting", MaxIndent)
					return false
				}
				continue
			}
			lineStart, lineIndent, indent, dashes = false, indent, 0, 0
		}
		switch c {
		case '\n':
			lineStart = true
			if depth == 0 {
				valueStart = true
			}
			continue
		case ' ', '\t', '\r':
			continue
		case '#':
			if i == 0 || data[i-1] == ' ' || data[i-1] == '\t' || data[i-1] == '\n' {
				for i+1 < len(data) && data[i+1] != '\n' {
					i++
				}
				continue
			}
		}
		if depth == 0 && !valueStart {
			// inside a block plain scalar: only ": " starts a value
			if c == ':' && (i+1 == len(data) || data[i+1] == ' ' || data[i+1] == '\n') {
				valueStart = true
			}
			continue
		}
		switch c {
		case '[', '{':
			if depth++; depth > MaxNesting {
				l.errAt(posOf(data, i), "", "nesting deeper than %d levels of [ and {, the bound of a suite", MaxNesting)
				return false
			}
			valueStart = true
			continue
		case ']', '}':
			if depth > 0 {
				depth--
			}
			valueStart = depth > 0
			continue
		case ',':
			valueStart = true
			continue
		case '|', '>':
			if depth == 0 {
				// i lands on the newline that ends the scalar, or the end
				if i = skipBlockScalar(data, i, lineIndent); i < len(data) {
					lineStart, valueStart = true, true
				}
				continue
			}
		case '"', '\'':
			i = skipQuoted(data, i)
			valueStart = depth > 0
			continue
		case '-', '?', ':':
			if i+1 == len(data) || data[i+1] == ' ' || data[i+1] == '\n' || data[i+1] == '\r' {
				if c == '-' && depth == 0 {
					if dashes++; dashes > MaxNesting {
						l.errAt(posOf(data, i), "", "nesting deeper than %d levels of block sequences on one line, the bound of a suite", MaxNesting)
						return false
					}
				}
				valueStart = true
				continue
			}
		}
		// a plain scalar starts here
		valueStart = depth > 0 && (c == ':')
	}
	return true
}

// skipQuoted returns the offset of the quote that closes the quoted scalar
// opening at data[i] (or the last byte when it is not closed).
func skipQuoted(data []byte, i int) int {
	q := data[i]
	for j := i + 1; j < len(data); j++ {
		switch {
		case q == '"' && data[j] == '\\':
			j++
		case data[j] == q:
			if q == '\'' && j+1 < len(data) && data[j+1] == '\'' {
				j++ // '' inside single quotes
				continue
			}
			return j
		}
	}
	return len(data) - 1
}

// skipBlockScalar returns the offset of the newline that ends the block
// scalar (| or >) whose indicator is at data[i], on a line indented by
// indent: its content is every following line indented further, or blank.
func skipBlockScalar(data []byte, i, indent int) int {
	for i < len(data) && data[i] != '\n' {
		i++
	}
	for i < len(data) {
		j, k := i+1, 0
		for j < len(data) && data[j] == ' ' {
			j, k = j+1, k+1
		}
		if j < len(data) && data[j] != '\n' && data[j] != '\r' && k <= indent {
			return i
		}
		for j < len(data) && data[j] != '\n' {
			j++
		}
		i = j
	}
	return len(data)
}
