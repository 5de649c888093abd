package report

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"sync"
)

// HTML writes d as one self-contained HTML5 page: an inline style sheet,
// no scripts, fonts, images or links to anything outside the page. The
// page has a table of contents, the Meta as a definition list, the Notes
// in a warning box, then each section with its paragraphs, its charts as
// inline SVG (each with its figures in a collapsed table), and its tables.
// Every text of d is escaped. The output depends on d alone.
func HTML(w io.Writer, d *Doc) error {
	if d == nil {
		return errors.New("html report: nil document")
	}
	if err := pageTemplate().Execute(w, newHTMLPage(d)); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

// htmlPage is a Doc prepared for the page template: anchors chosen, charts
// drawn, tables padded.
type htmlPage struct {
	Title string
	// Notice is the verification notice: its headline and its lines.
	Notice      string
	NoticeLines []string
	Meta        []KV
	Notes       []string
	Sections    []htmlSection
}

// htmlSection is a Section with its anchor; its charts are split into
// the wide ones (bar charts, drawn twice: for a desktop column and for a
// phone) and the small ones, laid out in a grid that reflows.
type htmlSection struct {
	ID, Title string
	Text      []string
	Wide      []htmlChart
	Small     []htmlChart
	Tables    []htmlTable
	Groups    []htmlGroup
}

// htmlGroup is a Group prepared for the page.
type htmlGroup struct {
	Title   string
	Text    []string
	Small   []htmlChart
	Details []htmlDetail
}

// htmlDetail is a Detail prepared for the page.
type htmlDetail struct {
	Summary string
	Open    bool
	Text    []string
	Small   []htmlChart
	Tables  []htmlTable
}

// htmlChart is a drawn chart and the table of its figures (nil when it
// has none).
type htmlChart struct {
	SVG  template.HTML
	Data *htmlTable
	Open bool // the figures are shown, not folded (bar charts: median [min–max])
}

// newHTMLChart draws c: a bar chart wide and narrow (the page's style
// sheet shows one of them), any other chart small, never scaled down.
func newHTMLChart(c Chart) (hc htmlChart, wide bool) {
	// chartSVG escapes every text it writes.
	switch {
	case c.Kind == Bars:
		hc.SVG = template.HTML(chartSVG(c, sizeWide, "chart wide") + chartSVG(c, sizeNarrow, "chart narrow"))
		hc.Open, wide = true, true
	case c.OverTime:
		hc.SVG = template.HTML(chartSVG(c, sizePanel, "chart small overtime"))
	default:
		hc.SVG = template.HTML(chartSVG(c, sizeSmall, "chart small"))
	}
	if chartHasData(c) && !c.OverTime {
		t := newHTMLTable(chartTable(c))
		hc.Data = &t
	}
	return hc, wide
}

// smallCharts draws charts that are all small.
func smallCharts(cs []Chart) []htmlChart {
	var out []htmlChart
	for _, c := range cs {
		hc, _ := newHTMLChart(c)
		out = append(out, hc)
	}
	return out
}

// cleanText is the non-empty paragraphs of ps, trimmed.
func cleanText(ps []string) []string {
	var out []string
	for _, t := range ps {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// htmlTable is a Table whose rows all have as many cells as the header.
type htmlTable struct {
	Caption string
	Header  []string
	Rows    [][]string
	Labels  int // leading label columns, left aligned
}

// newHTMLPage prepares d for the page template.
func newHTMLPage(d *Doc) htmlPage {
	p := htmlPage{Title: oneLine(d.Title), Meta: d.Meta, Notes: d.Notes}
	if len(d.Notice) > 0 {
		p.Notice = strings.TrimSpace(d.Notice[0])
		for _, l := range d.Notice[1:] {
			p.NoticeLines = append(p.NoticeLines, strings.TrimPrefix(strings.TrimSpace(l), "- "))
		}
	}
	if p.Title == "" {
		p.Title = "benchrig report"
	}
	for i, s := range d.Sections {
		hs := htmlSection{ID: anchor(i, s.Title), Title: oneLine(s.Title), Text: cleanText(s.Text)}
		for _, c := range s.Charts {
			hc, wide := newHTMLChart(c)
			if wide {
				hs.Wide = append(hs.Wide, hc)
			} else {
				hs.Small = append(hs.Small, hc)
			}
		}
		for _, t := range s.Tables {
			hs.Tables = append(hs.Tables, newHTMLTable(t))
		}
		for _, g := range s.Groups {
			hg := htmlGroup{Title: oneLine(g.Title), Text: cleanText(g.Text), Small: smallCharts(g.Charts)}
			for _, dt := range g.Details {
				hd := htmlDetail{Summary: oneLine(dt.Summary), Open: dt.Open, Text: cleanText(dt.Text), Small: smallCharts(dt.Charts)}
				for _, t := range dt.Tables {
					hd.Tables = append(hd.Tables, newHTMLTable(t))
				}
				hg.Details = append(hg.Details, hd)
			}
			hs.Groups = append(hs.Groups, hg)
		}
		p.Sections = append(p.Sections, hs)
	}
	return p
}

// newHTMLTable pads the rows and header of t to its widest row.
func newHTMLTable(t Table) htmlTable {
	n := tableWidth(t)
	ht := htmlTable{Caption: oneLine(t.Caption), Header: padCells(t.Header, n), Labels: t.labels()}
	for _, r := range t.Rows {
		ht.Rows = append(ht.Rows, padCells(r, n))
	}
	return ht
}

// anchor is the id of section i: its number and the ASCII letters and
// digits of its title ("s2-requests-s"), unique because of the number.
func anchor(i int, title string) string {
	var b strings.Builder
	b.WriteString("s" + strconv.Itoa(i+1))
	dash := true
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if dash {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		default:
			dash = true
		}
	}
	return b.String()
}

// pageTemplate is the page, parsed on first use (parsing it at start-up
// cost every benchrig command half a millisecond). html/template escapes
// every field in its context; only the SVG, drawn and escaped by
// chartSVG, is inserted as is.
var pageTemplate = sync.OnceValue(func() *template.Template { return template.Must(template.New("page").Parse(pageText)) })

const pageText = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>` + pageCSS + `</style>
</head>
<body>
{{- if .Notice}}
<div class="verification" role="alert" style="border: 2px solid #b00020; border-left: 8px solid #b00020; background: #fde7ea; color: #000; padding: .5rem 1rem; margin: 0 0 1rem">
<p><strong>{{.Notice}}</strong></p>
{{- if .NoticeLines}}
<ul>
{{- range .NoticeLines}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
</div>
{{- end}}
<header>
<h1>{{.Title}}</h1>
{{- if .Meta}}
<dl class="meta">
{{- range .Meta}}
<dt>{{.Key}}</dt><dd>{{.Value}}</dd>
{{- end}}
</dl>
{{- end}}
{{- if .Notes}}
<div class="notes" role="note">
{{- range .Notes}}
<p><strong>Note:</strong> {{.}}</p>
{{- end}}
</div>
{{- end}}
{{- if .Sections}}
<nav class="toc"><h2>Contents</h2><ol>
{{- range .Sections}}
<li><a href="#{{.ID}}">{{.Title}}</a></li>
{{- end}}
</ol></nav>
{{- end}}
</header>
<main>
{{- range .Sections}}
<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{- range .Text}}
<p>{{.}}</p>
{{- end}}
{{- range .Wide}}
{{template "chart" .}}
{{- end}}
{{- template "grid" .Small}}
{{- range .Tables}}
{{template "table" .}}
{{- end}}
{{- range .Groups}}
<section class="group">
<h3>{{.Title}}</h3>
{{- range .Text}}
<p>{{.}}</p>
{{- end}}
{{- template "grid" .Small}}
{{- range .Details}}
<details class="sample"{{if .Open}} open{{end}}><summary>{{.Summary}}</summary>
{{- range .Text}}
<p>{{.}}</p>
{{- end}}
{{- template "grid" .Small}}
{{- range .Tables}}
{{template "table" .}}
{{- end}}
</details>
{{- end}}
</section>
{{- end}}
</section>
{{- end}}
</main>
</body>
</html>
{{define "chart"}}<figure class="chart">
{{.SVG}}
{{- with .Data}}
<details{{if $.Open}} open{{end}}><summary>Figures of this chart</summary>
{{template "table" .}}
</details>
{{- end}}
</figure>{{end}}
{{define "grid"}}{{if .}}
<div class="grid">
{{- range .}}
{{template "chart" .}}
{{- end}}
</div>{{end}}{{end}}
{{define "table"}}<div class="scroll"><table>
{{- if .Caption}}
<caption>{{.Caption}}</caption>
{{- end}}
{{- if .Header}}
<thead><tr>{{range $i, $c := .Header}}<th{{if lt $i $.Labels}} class="l"{{end}}>{{$c}}</th>{{end}}</tr></thead>
{{- end}}
<tbody>
{{- range .Rows}}
<tr>{{range $i, $c := .}}<td{{if lt $i $.Labels}} class="l{{if gt (len $c) 48}} w{{end}}"{{else if gt (len $c) 48}} class="w"{{end}}>{{$c}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table></div>{{end}}`

// pageCSS is the page's style sheet: light, readable, printable; the
// label columns of a table (class l) are aligned left, figures right.
const pageCSS = `
:root { color-scheme: light; }
body { margin: 0 auto; max-width: 1200px; padding: 1.5rem; background: #fff; color: #1b1b1b;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; }
h1 { font-size: 1.6rem; margin: 0 0 1rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .75rem; padding-bottom: .25rem; border-bottom: 1px solid #ddd; }
p, td, dd { white-space: pre-line; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0 0 1rem; }
dl.meta dt { font-weight: 600; color: #444; }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
.notes { border: 1px solid #e0b400; border-left: 6px solid #e0b400; background: #fff8db;
  padding: .5rem 1rem; margin: 1rem 0; border-radius: 4px; }
.notes p { margin: .35rem 0; }
nav.toc h2 { font-size: 1rem; border: 0; margin: 1rem 0 .25rem; }
nav.toc ol { margin: 0; padding-left: 1.5rem; }
a { color: #0b5cad; }
figure.chart { margin: 1rem 0 1.5rem; }
figure.chart svg { display: block; height: auto; }
figure.chart svg.wide { width: 100%; max-width: 900px; }
figure.chart svg.narrow { display: none; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr)); gap: 10px; margin: .5rem 0 1rem; }
.grid figure.chart { margin: 0; min-width: 340px; }
.grid figure.chart svg { width: 100%; }
svg text { fill: #1b1b1b; }
svg text.in { fill: #fff; }
h3 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
details.sample { border: 1px solid #e3e3e3; border-radius: 4px; padding: .25rem .6rem; margin: .5rem 0; }
details.sample > summary { font-size: .95rem; color: #1b1b1b; padding: .2rem 0; }
td, th { white-space: nowrap; }
td.l, th.l { white-space: nowrap; }
td.w { white-space: pre-line; text-align: left; min-width: 16rem; }
details { margin: .25rem 0 0; }
summary { cursor: pointer; color: #444; font-size: .9rem; }
.scroll { overflow-x: auto; margin: .75rem 0 1.25rem; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: .9rem; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { padding: .3rem .7rem; border-bottom: 1px solid #e3e3e3; text-align: right; vertical-align: top; }
th.l, td.l { text-align: left; }
thead th { background: #f0f3f6; border-bottom: 2px solid #c8ced6; }
tbody tr:nth-child(even) { background: #f7f9fb; }
@media (max-width: 799px) {
  body { padding: .75rem; }
  figure.chart svg.wide { display: none; }
  figure.chart svg.narrow { display: block; width: 340px; }
  dl.meta { grid-template-columns: 1fr; }
  dl.meta dd { margin-bottom: .35rem; }
  caption { position: sticky; left: 0; max-width: calc(100vw - 1.5rem); }
}
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  nav.toc { display: none; }
  figure.chart, table { break-inside: avoid; }
  a { color: inherit; text-decoration: none; }
}
`
