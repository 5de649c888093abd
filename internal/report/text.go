package report

import (
	"io"
	"strings"
)

// Text writes a Doc for a terminal: the title, the key facts, the notes,
// then each section's paragraphs and box tables. Charts are left to the
// HTML report; their figures are in the tables.
func Text(w io.Writer, d *Doc) error {
	p := &printer{w: w}
	p.f("%s\n\n", d.Title)
	width := 0
	for _, kv := range d.Meta {
		width = max(width, len([]rune(kv.Key)))
	}
	for _, kv := range d.Meta {
		p.f("%s%s  %s\n", kv.Key, strings.Repeat(" ", width-len([]rune(kv.Key))), kv.Value)
	}
	if len(d.Notes) > 0 {
		p.f("\n")
		for _, n := range d.Notes {
			p.f("! %s\n", n)
		}
	}
	for _, s := range d.Sections {
		p.f("\n%s\n%s\n", s.Title, strings.Repeat("=", len([]rune(s.Title))))
		for _, t := range s.Text {
			p.f("%s\n", t)
		}
		for _, t := range s.Tables {
			if t.Caption != "" {
				p.f("\n%s:\n", t.Caption)
			} else {
				p.f("\n")
			}
			bt := &table{}
			bt.add(t.Header...)
			for _, r := range t.Rows {
				bt.add(r...)
			}
			p.table(bt)
		}
	}
	return p.err
}
