package message

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// placeholder is how a key number is written in a template.
const placeholder = "{id}"

// maxDepth bounds the nesting of a template's JSON (protobuf's default
// recursion limit).
const maxDepth = 10000

// hole is a value of a template's JSON that holds {id}: the bare {id}, or a
// string with {id} in it.
type hole struct {
	start, end int    // the value's span in the JSON text
	quoted     bool   // a string (else the bare {id})
	text       string // the string's decoded text
	field      bool   // the whole value of a top-level field
	key        string // that field's name as written
	path       string // where it is, for errors ("inner.name", "ids[2]")
}

// pathElem is one step of the path to a value: an object's key or an
// array's index.
type pathElem struct {
	key   string
	index int // -1 for a key
}

// jsonScanner finds the holes of a template's JSON text. It checks the
// syntax only as far as it needs to find them; protojson checks the rest.
type jsonScanner struct {
	s     string
	i     int
	path  []pathElem
	holes []hole
}

// scanHoles returns the holes of the JSON text s, or an error naming a
// syntax error's byte offset or {id} in a field name.
func scanHoles(s string) ([]hole, error) {
	sc := &jsonScanner{s: s}
	if err := sc.value(); err != nil {
		return nil, err
	}
	sc.ws()
	if sc.i < len(sc.s) {
		return nil, sc.syntax("text after the message")
	}
	return sc.holes, nil
}

// pathString renders the current path: keys joined by ".", indexes in
// brackets.
func (sc *jsonScanner) pathString() string {
	var b strings.Builder
	for _, e := range sc.path {
		if e.index >= 0 {
			fmt.Fprintf(&b, "[%d]", e.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(e.key)
	}
	return b.String()
}

func (sc *jsonScanner) syntax(what string) error {
	return fmt.Errorf("malformed JSON at byte offset %d: %s", sc.i, what)
}

// ws skips white space.
func (sc *jsonScanner) ws() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// addHole records a hole at the current path.
func (sc *jsonScanner) addHole(h hole) {
	if len(sc.path) == 1 && sc.path[0].index < 0 {
		h.field, h.key = true, sc.path[0].key
	}
	h.path = sc.pathString()
	sc.holes = append(sc.holes, h)
}

// value scans one JSON value.
func (sc *jsonScanner) value() error {
	sc.ws()
	if sc.i >= len(sc.s) {
		return sc.syntax("unexpected end, want a value")
	}
	if strings.HasPrefix(sc.s[sc.i:], placeholder) {
		sc.addHole(hole{start: sc.i, end: sc.i + len(placeholder)})
		sc.i += len(placeholder)
		return nil
	}
	switch c := sc.s[sc.i]; c {
	case '{':
		return sc.object()
	case '[':
		return sc.array()
	case '"':
		start := sc.i
		text, err := sc.str()
		if err != nil {
			return err
		}
		if strings.Contains(text, placeholder) {
			sc.addHole(hole{start: start, end: sc.i, quoted: true, text: text})
		}
		return nil
	default:
		start := sc.i
		for sc.i < len(sc.s) && !strings.ContainsRune(" \t\r\n,:[]{}\"", rune(sc.s[sc.i])) {
			sc.i++
		}
		if sc.i == start {
			return sc.syntax(fmt.Sprintf("unexpected %q, want a value", c))
		}
		return nil
	}
}

// str scans a string, returning its decoded text.
func (sc *jsonScanner) str() (string, error) {
	start := sc.i
	sc.i++ // the opening quote
	escaped := false
	for {
		if sc.i >= len(sc.s) {
			sc.i = start
			return "", sc.syntax("a string without its closing quote")
		}
		switch sc.s[sc.i] {
		case '"':
			sc.i++
			raw := sc.s[start:sc.i]
			if !utf8.ValidString(raw) {
				sc.i = start
				return "", sc.syntax("a string that is not valid UTF-8")
			}
			if !escaped {
				return raw[1 : len(raw)-1], nil
			}
			var text string
			if err := json.Unmarshal([]byte(raw), &text); err != nil {
				sc.i = start
				return "", sc.syntax("a string with an invalid escape")
			}
			return text, nil
		case '\\':
			escaped = true
			sc.i += 2
		default:
			if sc.s[sc.i] < 0x20 {
				return "", sc.syntax("a control character in a string")
			}
			sc.i++
		}
	}
}

// object scans an object, from its '{'.
func (sc *jsonScanner) object() error {
	if len(sc.path) >= maxDepth {
		return sc.syntax("nested deeper than " + strconv.Itoa(maxDepth))
	}
	sc.i++
	sc.ws()
	if sc.i < len(sc.s) && sc.s[sc.i] == '}' {
		sc.i++
		return nil
	}
	for {
		sc.ws()
		if sc.i >= len(sc.s) || sc.s[sc.i] != '"' {
			return sc.syntax("want a field name in quotes")
		}
		key, err := sc.str()
		if err != nil {
			return err
		}
		if strings.Contains(key, placeholder) {
			sc.path = append(sc.path, pathElem{key: key, index: -1})
			return fmt.Errorf("{id} in a field name (%s): %s", sc.pathString(), whereID)
		}
		sc.ws()
		if sc.i >= len(sc.s) || sc.s[sc.i] != ':' {
			return sc.syntax("want ':' after a field name")
		}
		sc.i++
		sc.path = append(sc.path, pathElem{key: key, index: -1})
		if err := sc.value(); err != nil {
			return err
		}
		sc.path = sc.path[:len(sc.path)-1]
		if more, err := sc.next('}', "want ',' or '}' after a field's value"); !more {
			return err
		}
	}
}

// next scans what follows a member or an element: ',' (more to come),
// the closing byte (done), or anything else (the syntax error want).
func (sc *jsonScanner) next(closing byte, want string) (more bool, err error) {
	sc.ws()
	if sc.i < len(sc.s) && sc.s[sc.i] == ',' {
		sc.i++
		return true, nil
	}
	if sc.i < len(sc.s) && sc.s[sc.i] == closing {
		sc.i++
		return false, nil
	}
	return false, sc.syntax(want)
}

// array scans an array, from its '['.
func (sc *jsonScanner) array() error {
	if len(sc.path) >= maxDepth {
		return sc.syntax("nested deeper than " + strconv.Itoa(maxDepth))
	}
	sc.i++
	sc.ws()
	if sc.i < len(sc.s) && sc.s[sc.i] == ']' {
		sc.i++
		return nil
	}
	for n := 0; ; n++ {
		sc.path = append(sc.path, pathElem{index: n})
		if err := sc.value(); err != nil {
			return err
		}
		sc.path = sc.path[:len(sc.path)-1]
		if more, err := sc.next(']', "want ',' or ']' after an element"); !more {
			return err
		}
	}
}
