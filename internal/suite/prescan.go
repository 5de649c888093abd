package suite

import (
	"bytes"
	"unicode/utf8"
)

// Bounds checked on a suite's bytes before the YAML parser sees them.
// goccy/go-yaml's parser allocates quadratically in nesting depth (4,000
// nested "[" cost 26 MB, 8,000 cost 100 MB; 100k reached 12.6 GB) and takes
// time quadratic in the keys of one mapping (10k keys 1.4 s, 20k 3.6 s,
// 40k 15 s), and every node costs it about 1.7 KiB (a 4 MiB list of "[]"
// took 25 s and 1.75 GB): deep nesting, large mappings and many nodes are
// refused by a linear scan first, so that the worst suite of MaxSuiteBytes
// parses in about a second and under 350 MiB (TestWorstSuiteParse).
const (
	// MaxSuiteBytes bounds a suite file.
	MaxSuiteBytes = 4 << 20
	// MaxNesting bounds the nesting of flow collections ([ and {) and of
	// block sequences written on one line ("- - - x").
	MaxNesting = 100
	// MaxIndent bounds a line's indentation, which bounds block nesting.
	MaxIndent = 400
	// MaxKeys bounds the keys of one mapping (block or flow): the seeds'
	// largest mappings hold 14 (an env: map, a target's settings).
	MaxKeys = 256
	// MaxNodes bounds the nodes of the document (every scalar, list and
	// mapping, every list entry, as the pre-scan counts them): the
	// largest seed suite, 4,096 HTTP requests listed inline, holds 27,581;
	// more requests go in a requests_file.
	MaxNodes = 100000
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
// enough to count nesting, nodes and the keys of each mapping: a [ or {
// opens a collection when it starts a value (at a line's start, after
// ": ", "- " or "? ") or inside another flow collection; quoted scalars and
// comments are skipped; a block mapping's keys are the ": " indicators of
// its column, a flow mapping's its entries. The counts are the parser's
// work, not exact YAML: a bound is refused where it is passed, with the
// bound in the message.
func scanNesting(l *located, data []byte) bool {
	sc := &scanner{l: l, data: data}
	return sc.scan()
}

// scanner is scanNesting's state.
type scanner struct {
	l    *located
	data []byte
	// nodes counts the document's nodes so far.
	nodes int
	// flow holds, per open flow collection, whether it is a mapping ({)
	// and its entries so far.
	flow []flowFrame
	// block holds the open block mappings, innermost last: the column of
	// their keys and the keys so far.
	block []blockFrame
	// keyCol is the column where the current block entry of the line
	// starts: its indentation, or the first byte past a "- " (entryNext
	// says that byte is still to come).
	keyCol    int
	entryNext bool
}

type flowFrame struct {
	mapping bool
	entries int
}

type blockFrame struct{ col, keys int }

// node counts one node starting at offset i.
func (sc *scanner) node(i int) bool {
	if sc.nodes++; sc.nodes > MaxNodes {
		sc.l.errAt(posOf(sc.data, i), "", "more than %d YAML nodes (scalars, lists, mappings and their entries), the bound of a suite (list many HTTP requests in a requests_file)", MaxNodes)
		return false
	}
	return true
}

// endBlock closes the block mappings whose keys are right of column col.
func (sc *scanner) endBlock(col int) {
	for len(sc.block) > 0 && sc.block[len(sc.block)-1].col > col {
		sc.block = sc.block[:len(sc.block)-1]
	}
}

// blockKey counts a key of the block mapping at sc.keyCol, whose ": " is
// at offset i.
func (sc *scanner) blockKey(i int) bool {
	sc.endBlock(sc.keyCol)
	if n := len(sc.block); n > 0 && sc.block[n-1].col == sc.keyCol {
		sc.block[n-1].keys++
	} else {
		sc.block = append(sc.block, blockFrame{col: sc.keyCol, keys: 1})
	}
	return sc.keys(sc.block[len(sc.block)-1].keys, i)
}

// keys checks the keys of one mapping, n after the one at offset i.
func (sc *scanner) keys(n, i int) bool {
	if n > MaxKeys {
		sc.l.errAt(posOf(sc.data, i), "", "a mapping with more than %d keys, the bound of a suite", MaxKeys)
		return false
	}
	return true
}

func (sc *scanner) scan() bool {
	data := sc.data
	valueStart := true // the next non-space byte starts a value
	lineStart := true
	indent, lineIndent, dashes, lineOff := 0, 0, 0, 0
	for i := 0; i < len(data); i++ {
		c := data[i]
		depth := len(sc.flow)
		if sc.entryNext && depth == 0 && c != ' ' && c != '\t' {
			sc.entryNext = false
			if c != '\n' && c != '\r' && c != '#' {
				sc.keyCol = i - lineOff
			}
		}
		if lineStart {
			if c == ' ' {
				if indent++; indent > MaxIndent {
					sc.l.errAt(posOf(data, i), "", "line is indented by more than %d columns, the bound of a suite's nesting", MaxIndent)
					return false
				}
				continue
			}
			lineStart, lineIndent, indent, dashes = false, indent, 0, 0
			if depth == 0 && c != '\n' && c != '\r' && c != '#' {
				sc.keyCol = lineIndent
				sc.endBlock(lineIndent)
			}
		}
		switch c {
		case '\n':
			lineStart, lineOff = true, i+1
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
			if c == ':' && (i+1 == len(data) || data[i+1] == ' ' || data[i+1] == '\n' || data[i+1] == '\r') {
				valueStart = true
				if !sc.blockKey(i) {
					return false
				}
			}
			continue
		}
		switch c {
		case '[', '{':
			if depth+1 > MaxNesting {
				sc.l.errAt(posOf(data, i), "", "nesting deeper than %d levels of [ and {, the bound of a suite", MaxNesting)
				return false
			}
			if !sc.node(i) {
				return false
			}
			sc.flow = append(sc.flow, flowFrame{mapping: c == '{'})
			valueStart = true
			continue
		case ']', '}':
			if depth > 0 {
				sc.flow = sc.flow[:depth-1]
			}
			valueStart = len(sc.flow) > 0
			continue
		case ',':
			if depth > 0 {
				f := &sc.flow[depth-1]
				if f.entries++; f.mapping && !sc.keys(f.entries+1, i) {
					return false
				}
			}
			valueStart = true
			continue
		case '|', '>':
			if depth == 0 {
				if !sc.node(i) {
					return false
				}
				// i lands on the newline that ends the scalar, or the end
				if i = skipBlockScalar(data, i, lineIndent); i < len(data) {
					lineStart, valueStart, lineOff = true, true, i+1
				}
				continue
			}
		case '&', '!':
			// an anchor or a tag: a property of the node that follows,
			// which still starts a value (its [ or { is counted)
			for i+1 < len(data) && data[i+1] != ' ' && data[i+1] != '\n' && data[i+1] != '\r' && data[i+1] != '\t' &&
				(depth == 0 || (data[i+1] != ',' && data[i+1] != ']' && data[i+1] != '}')) {
				i++
			}
			continue
		case '"', '\'':
			if !sc.node(i) {
				return false
			}
			i = skipQuoted(data, i)
			valueStart = depth > 0
			continue
		case '-', '?', ':':
			if i+1 == len(data) || data[i+1] == ' ' || data[i+1] == '\n' || data[i+1] == '\r' {
				if depth == 0 {
					switch c {
					case '-':
						if dashes++; dashes > MaxNesting {
							sc.l.errAt(posOf(data, i), "", "nesting deeper than %d levels of block sequences on one line, the bound of a suite", MaxNesting)
							return false
						}
						if !sc.node(i) {
							return false
						}
						// the entry's own mappings start right of the dash
						sc.endBlock(i - lineOff)
						sc.entryNext = true
					case ':':
						if !sc.blockKey(i) {
							return false
						}
					}
				}
				valueStart = true
				continue
			}
		}
		// a plain scalar starts here
		if !sc.node(i) {
			return false
		}
		valueStart = false
		if depth > 0 {
			i = skipFlowPlain(data, i)
		}
	}
	return true
}

// skipFlowPlain returns the offset of the last byte of the plain scalar
// that starts at data[i] inside a flow collection: it ends before a flow
// indicator, a ": ", a " #" comment or the end of the line.
func skipFlowPlain(data []byte, i int) int {
	for ; i+1 < len(data); i++ {
		switch n := data[i+1]; n {
		case ',', '[', ']', '{', '}', '\n', '\r':
			return i
		case ':':
			if i+2 == len(data) || bytes.IndexByte([]byte(" \t\r\n,[]{}"), data[i+2]) >= 0 {
				return i
			}
		case '#':
			if data[i] == ' ' || data[i] == '\t' {
				return i
			}
		}
	}
	return i
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
