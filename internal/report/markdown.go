package report

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Markdown writes d as GitHub-flavoured Markdown: the title as a heading,
// Meta as a bullet list, each Note as a block quote, then each section with
// its paragraphs, its charts and its tables. Markdown cannot draw, so each
// chart is written as the table of its figures. Every text of d is
// escaped, so it reads as the same plain text the HTML page shows. The
// output depends on d alone: the same Doc gives the same bytes.
func Markdown(w io.Writer, d *Doc) error {
	if d == nil {
		return errors.New("markdown report: nil document")
	}
	var blocks []string
	if len(d.Notice) > 0 {
		blocks = append(blocks, mdNotice(d.Notice))
	}
	if t := oneLine(d.Title); t != "" {
		blocks = append(blocks, "# "+mdHeading(t))
	}
	if len(d.Meta) > 0 {
		lines := make([]string, len(d.Meta))
		for i, kv := range d.Meta {
			lines[i] = "- **" + mdInline(oneLine(kv.Key)) + "**: " + mdInline(kv.Value)
		}
		blocks = append(blocks, strings.Join(lines, "\n"))
	}
	for _, n := range d.Notes {
		blocks = append(blocks, "> **Note:** "+mdInline(strings.TrimSpace(n)))
	}
	for _, s := range d.Sections {
		blocks = append(blocks, mdSection(s)...)
	}
	out := strings.Join(blocks, "\n\n") + "\n"
	if _, err := io.WriteString(w, out); err != nil {
		return fmt.Errorf("write markdown report: %w", err)
	}
	return nil
}

// mdNotice is the verification notice as a block quote: the headline in
// bold, the problems as a list.
func mdNotice(lines []string) string {
	out := []string{"> **" + mdInline(strings.TrimSpace(lines[0])) + "**"}
	if len(lines) > 1 {
		out = append(out, ">")
	}
	for _, l := range lines[1:] {
		l = strings.TrimSpace(l)
		if w, ok := strings.CutPrefix(l, "! "); ok {
			out = append(out, "> - **!** "+mdInline(w))
		} else {
			out = append(out, "> - "+mdInline(strings.TrimPrefix(l, "- ")))
		}
	}
	return strings.Join(out, "\n")
}

// mdSection returns the blocks of one section: heading, paragraphs,
// charts (as tables), tables.
func mdSection(s Section) []string {
	blocks := []string{"## " + mdHeading(oneLine(s.Title))}
	for _, p := range s.Text {
		if p = strings.TrimSpace(p); p != "" {
			blocks = append(blocks, mdParagraph(p))
		}
	}
	for _, c := range s.Charts {
		if c.OverTime {
			continue // over-time charts are drawn in HTML only; their phases are in the tables
		}
		if !chartHasData(c) {
			blocks = append(blocks, "**"+mdInline(oneLine(chartCaption(c)))+"**", "*No data.*")
			continue
		}
		blocks = append(blocks, mdTable(chartTable(c))...)
	}
	for _, t := range s.Tables {
		blocks = append(blocks, mdTable(t)...)
	}
	for _, g := range s.Groups {
		blocks = append(blocks, "### "+mdHeading(oneLine(g.Title)))
		for _, p := range g.Text {
			if p = strings.TrimSpace(p); p != "" {
				blocks = append(blocks, mdParagraph(p))
			}
		}
		for _, dt := range g.Details {
			blocks = append(blocks, "#### "+mdHeading(oneLine(dt.Summary)))
			for _, p := range dt.Text {
				if p = strings.TrimSpace(p); p != "" {
					blocks = append(blocks, mdParagraph(p))
				}
			}
			for _, t := range dt.Tables {
				blocks = append(blocks, mdTable(t)...)
			}
		}
	}
	return blocks
}

// mdTable returns a table as blocks: its caption as a bold line, then a
// GFM table whose label columns are left aligned and the others right
// aligned. Rows shorter than the widest row are padded with empty cells.
func mdTable(t Table) []string {
	var blocks []string
	if c := oneLine(t.Caption); c != "" {
		blocks = append(blocks, "**"+mdInline(c)+"**")
	}
	n := tableWidth(t)
	if n == 0 {
		return blocks
	}
	var b strings.Builder
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range padCells(cells, n) {
			b.WriteString(" " + mdInline(strings.TrimSpace(c)) + " |")
		}
		b.WriteString("\n")
	}
	row(t.Header)
	b.WriteString("|")
	for i := 0; i < n; i++ {
		if i < t.labels() {
			b.WriteString(" :--- |")
		} else {
			b.WriteString(" ---: |")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
	return append(blocks, strings.TrimSuffix(b.String(), "\n"))
}

// mdInline escapes s for an inline position (a table cell, a list item, a
// heading): characters that would start emphasis, code, links, HTML, math,
// strikethrough or a cell boundary are backslash-escaped, and line breaks
// become <br>, which keeps a cell on its line.
func mdInline(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		next := rune(0)
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		switch {
		case r == '\n':
			b.WriteString("<br>")
			continue
		case strings.ContainsRune("\\`*_|~$<>", r):
			b.WriteByte('\\')
		case r == ']' && (next == '(' || next == '['):
			// "[text](url)" and "[text][ref]" are links; a lone
			// bracket pair ("8,143 [7,733–8,290]") is not.
			b.WriteByte('\\')
		case r == '&' && (next == '#' || next >= 'a' && next <= 'z' || next >= 'A' && next <= 'Z'):
			// "&amp;" would be read as an entity.
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdHeading escapes a heading's text; a trailing "#" would otherwise be
// read as the closing sequence of the heading and dropped.
func mdHeading(s string) string {
	s = mdInline(s)
	if strings.HasSuffix(s, "#") {
		s = s[:len(s)-1] + `\#`
	}
	return s
}

// mdParagraph escapes a paragraph, including what only matters at the
// start of a line: headings, lists, quotes, thematic breaks, link
// reference definitions.
func mdParagraph(s string) string {
	s = mdInline(s)
	if s == "" {
		return s
	}
	switch s[0] {
	case '#', '-', '+', '=', '[':
		return `\` + s
	}
	// "1. " and "1) " start ordered lists.
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') {
		return s[:i] + `\` + s[i:]
	}
	return s
}
