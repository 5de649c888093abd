package resp

import (
	"fmt"
	"strconv"
	"strings"
)

// Placeholders in templates. Any other text, braces included, is literal, so
// `CRUD:{db}.public.items:{"id":{id}}` needs no escaping.
const (
	phID  = "{id}"
	phKey = "{key}"
	phDB  = "{db}"
)

// hole says what fills a template part after its literal text.
type hole uint8

const (
	holeNone hole = iota
	holeID        // the key number in decimal
	holeKey       // the key template rendered for the key number
)

// part is literal text followed by an optional hole.
type part struct {
	lit  []byte
	hole hole
}

// template is a compiled template: rendering it appends into a buffer and
// allocates nothing.
type template struct {
	parts []part
}

// compileTemplate compiles s. {db} is replaced by db at once; {key} is
// accepted only when allowKey. field names the config field for errors.
func compileTemplate(field, s, db string, allowKey bool) (template, error) {
	if strings.Contains(s, phDB) {
		if db == "" {
			return template{}, fmt.Errorf("%s: uses {db} but db is not set", field)
		}
		s = strings.ReplaceAll(s, phDB, db)
	}
	var t template
	for {
		i := strings.IndexByte(s, '{')
		for i >= 0 && !strings.HasPrefix(s[i:], phID) && !(allowKey && strings.HasPrefix(s[i:], phKey)) {
			j := strings.IndexByte(s[i+1:], '{')
			if j < 0 {
				i = -1
				break
			}
			i += 1 + j
		}
		if i < 0 {
			if s != "" {
				t.parts = append(t.parts, part{lit: []byte(s)})
			}
			return t, nil
		}
		p := part{lit: []byte(s[:i]), hole: holeID}
		n := len(phID)
		if strings.HasPrefix(s[i:], phKey) {
			p.hole, n = holeKey, len(phKey)
		}
		t.parts = append(t.parts, p)
		s = s[i+n:]
	}
}

// has reports whether the template has a hole of kind h.
func (t template) has(h hole) bool {
	for _, p := range t.parts {
		if p.hole == h {
			return true
		}
	}
	return false
}

// appendTo renders the template for key number id. key renders {key}.
func (t template) appendTo(dst []byte, id int64, key *template) []byte {
	for _, p := range t.parts {
		dst = append(dst, p.lit...)
		switch p.hole {
		case holeID:
			dst = strconv.AppendInt(dst, id, 10)
		case holeKey:
			dst = key.appendTo(dst, id, nil)
		}
	}
	return dst
}
