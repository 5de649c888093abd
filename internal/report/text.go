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
	for _, l := range d.Notice {
		p.f("%s\n", l)
	}
	if len(d.Notice) > 0 {
		p.f("\n")
	}
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
			p.docTable(t)
		}
		for _, g := range s.Groups {
			p.f("\n%s\n%s\n", g.Title, strings.Repeat("-", len([]rune(g.Title))))
			for _, t := range g.Text {
				p.f("%s\n", t)
			}
			for _, dt := range g.Details {
				p.f("\n· %s\n", dt.Summary)
				for _, t := range dt.Text {
					p.f("%s\n", t)
				}
				for _, t := range dt.Tables {
					p.docTable(t)
				}
			}
		}
	}
	return p.err
}

// docTable prints a Doc's table as a box table under its caption.
func (p *printer) docTable(t Table) {
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
