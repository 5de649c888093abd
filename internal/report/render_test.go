package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const evilText = `<script>alert("x&y")</script>`

func renderMarkdown(t *testing.T, d *Doc) string {
	t.Helper()
	var b bytes.Buffer
	if err := Markdown(&b, d); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func renderHTML(t *testing.T, d *Doc) string {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, d); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// requireInOrder fails unless every want appears in s after the previous one.
func requireInOrder(t *testing.T, s string, want ...string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := strings.Index(s[at:], w)
		if i < 0 {
			t.Fatalf("%q missing or out of order after offset %d in:\n%s", w, at, s)
		}
		at += i + len(w)
	}
}

// svgElem is one element of a parsed SVG, with the text of its <title>.
type svgElem struct {
	name  string
	attr  map[string]string
	title string
}

// parseSVG parses an SVG strictly with encoding/xml and lists its elements.
func parseSVG(t *testing.T, s string) []svgElem {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(s))
	var out []svgElem
	var stack []int
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v\n%s", err, s)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			e := svgElem{name: tk.Name.Local, attr: map[string]string{}}
			for _, a := range tk.Attr {
				e.attr[a.Name.Local] = a.Value
			}
			out = append(out, e)
			stack = append(stack, len(out)-1)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if n := len(stack); n >= 2 && out[stack[n-1]].name == "title" {
				out[stack[n-2]].title += string(tk)
			}
		}
	}
	if len(out) == 0 || out[0].name != "svg" {
		t.Fatalf("not an SVG: %s", s)
	}
	return out
}

func svgElems(es []svgElem, name, class string) []svgElem {
	var out []svgElem
	for _, e := range es {
		if e.name == name && e.attr["class"] == class {
			out = append(out, e)
		}
	}
	return out
}

func svgAttr(t *testing.T, e svgElem, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(e.attr[name], 64)
	if err != nil {
		t.Fatalf("%s %s=%q: %v", e.name, name, e.attr[name], err)
	}
	return v
}

// svgBlocks extracts the <svg>…</svg> elements of an HTML page.
func svgBlocks(page string) []string {
	return regexp.MustCompile(`(?s)<svg.*?</svg>`).FindAllString(page, -1)
}

func testBarChart() Chart {
	return Chart{
		Kind: Bars, Title: "Requests/s", Unit: "req/s",
		Categories: []string{"64 keys · 4 conns", "64 keys · 16 conns", "4096 keys · 16 conns"},
		Series: []Series{
			{Name: "prepared-one", Points: []Point{{Y: 8143.2, Lo: 7733, Hi: 8290}, {Missing: true}, {Y: 9000}}},
			{Name: "simple", Points: []Point{{Y: 6100, Lo: 6100, Hi: 6100}, {Y: math.NaN()}}}, // short: third missing
		},
	}
}

func testLatencyChart() Chart {
	c := Chart{Kind: Lines, Title: "Latency by percentile", Unit: "ms", LogX: true,
		XLabels: map[float64]string{2: "50 %", 10: "90 %", 100: "99 %", 1000: "99.9 %", 10000: "99.99 %"}}
	for i, name := range []string{"prepared-one", "simple"} {
		s := Series{Name: name}
		for j, q := range []float64{0.5, 0.9, 0.99, 0.999, 0.9999} {
			s.Points = append(s.Points, Point{X: 1 / (1 - q), Y: float64(i+1) * float64(j+1) * 0.37})
		}
		c.Series = append(c.Series, s)
	}
	return c
}

func testDoc() *Doc {
	return &Doc{
		Title: "Suite redis-get",
		Meta:  []KV{{"Tool", "benchrig 0.3"}, {"Host", "box-1"}, {"Suite", "redis-get"}},
		Notes: []string{"First note", "Second note"},
		Sections: []Section{
			{Title: "Throughput", Text: []string{"Median of 3 repeats."}, Charts: []Chart{testBarChart()},
				Tables: []Table{{Caption: "Requests/s", Header: []string{"Case", "prepared-one", "simple"},
					Rows: [][]string{{"64 keys", "8,143 [7,733–8,290]", "6,100"}, {"4096 keys", "9,000"}}}}},
			{Title: "Latency", Charts: []Chart{testLatencyChart()}},
		},
	}
}

func TestMarkdownStructureAndOrder(t *testing.T) {
	md := renderMarkdown(t, testDoc())
	requireInOrder(t, md, "# Suite redis-get\n", "- **Tool**: benchrig 0.3\n", "- **Host**: box-1\n", "- **Suite**: redis-get",
		"> **Note:** First note", "> **Note:** Second note", "## Throughput", "Median of 3 repeats.",
		"**Requests/s (req/s)**", "| :--- | ---: | ---: |",
		"| 64 keys · 4 conns | 8,143 [7,733–8,290] | 6,100 |", "| 64 keys · 16 conns | – | – |", "| 4096 keys · 16 conns | 9,000 | – |",
		"**Requests/s**", "| Case | prepared-one | simple |", "| 64 keys | 8,143 [7,733–8,290] | 6,100 |", "| 4096 keys | 9,000 |  |",
		"## Latency", "| 50 % | 0.370 | 0.740 |", "| 90 % |", "| 99.99 % | 1.85 | 3.70 |")
	if again := renderMarkdown(t, testDoc()); again != md {
		t.Error("Markdown output is not deterministic")
	}
}

// cellCount counts the unescaped pipes of a table line, minus one.
func cellCount(line string) int {
	return len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(line, -1)) - 1
}

func TestMarkdownEscapingAndRaggedRows(t *testing.T) {
	d := &Doc{Title: "T #", Sections: []Section{{
		Title: "S",
		Text:  []string{"- not a list", "1. not a list either"},
		Tables: []Table{{
			Header: []string{"Case", "a|b"},
			Rows: [][]string{
				{"x|y", "line1\nline2"},
				{"*bold* _it_ `code`", "[link](http://e) &amp; <b>"},
				{"short"},
				{"long", "1", "2", "3"},
			},
		}},
	}}}
	md := renderMarkdown(t, d)
	for _, want := range []string{
		`# T \#`, `\- not a list`, `1\. not a list either`,
		`| Case | a\|b |  |  |`, `| :--- | ---: | ---: | ---: |`,
		`| x\|y | line1<br>line2 |  |  |`,
		"| \\*bold\\* \\_it\\_ \\`code\\` | [link\\](http://e) \\&amp; \\<b\\> |  |  |",
		`| short |  |  |  |`, `| long | 1 | 2 | 3 |`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in:\n%s", want, md)
		}
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "|") && cellCount(line) != 4 {
			t.Errorf("table line has %d cells, want 4: %q", cellCount(line), line)
		}
	}
}

func TestHTMLEscapesEverything(t *testing.T) {
	c := testBarChart()
	c.Title, c.Unit, c.Series[0].Name, c.Categories[0] = evilText, evilText, evilText, evilText
	l := testLatencyChart()
	l.XLabels[10] = evilText
	d := &Doc{
		Title: evilText, Meta: []KV{{evilText, evilText}}, Notes: []string{evilText},
		Sections: []Section{{Title: evilText, Text: []string{evilText}, Charts: []Chart{c, l},
			Tables: []Table{{Caption: evilText, Header: []string{evilText, "b"}, Rows: [][]string{{evilText, "1"}}}}}},
	}
	page := renderHTML(t, d)
	if strings.Contains(strings.ToLower(page), "<script") || strings.Contains(page, `"x&y"`) || strings.Contains(page, `x&y`) {
		t.Fatalf("unescaped text in page:\n%s", page)
	}
	// Title, h1, meta key and value, note, toc, h2, text, chart title
	// (×4: <title>, aria-label, text, details caption), table caption,
	// header and cell at least.
	if n := strings.Count(page, "&lt;script&gt;"); n < 15 {
		t.Errorf("escaped text appears %d times, want ≥ 15", n)
	}
	// Escaped once, not twice: the SVG's tooltips decode to the text.
	// The bar chart is drawn twice (wide and narrow), the latency chart once.
	blocks := svgBlocks(page)
	if len(blocks) != 3 {
		t.Fatalf("%d SVG blocks, want 3", len(blocks))
	}
	bars := svgElems(parseSVG(t, blocks[0]), "rect", "bar")
	if want := evilText + " · " + evilText + ": 8,143 [7,733–8,290] " + evilText; len(bars) == 0 || bars[0].title != want {
		t.Errorf("bar tooltip %q, want %q", bars, want)
	}
	pts := svgElems(parseSVG(t, blocks[2]), "circle", "pt")
	if want := "prepared-one · " + evilText + ": 0.740 ms"; len(pts) < 2 || pts[1].title != want {
		t.Errorf("marker tooltip %q, want %q", pts, want)
	}
}

func TestHTMLSelfContainedAndOrdered(t *testing.T) {
	page := renderHTML(t, testDoc())
	low := strings.ToLower(page)
	for _, bad := range []string{"http://", "https://", "src=", "@import", "url(", "<link", "<script", "<img", "<iframe", "<object"} {
		if strings.Contains(low, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	requireInOrder(t, page, "<!DOCTYPE html>", `<meta charset="utf-8">`, "<title>Suite redis-get</title>", "<style>", "</style>",
		"<dt>Tool</dt><dd>benchrig 0.3</dd>", "<dd>box-1</dd>", "<dd>redis-get</dd>",
		"First note", "Second note", `href="#s1-throughput"`, `href="#s2-latency"`,
		`<section id="s1-throughput">`, "<h2>Throughput</h2>", "Median of 3 repeats.", "<svg", "<details open>",
		"<td>8,143 [7,733–8,290]</td>", "</details>",
		"<caption>Requests/s</caption>", `<th class="l">Case</th><th>prepared-one</th><th>simple</th>`,
		`<td class="l">64 keys</td><td>8,143 [7,733–8,290]</td><td>6,100</td>`, `<td class="l">4096 keys</td><td>9,000</td><td></td></tr>`,
		`<section id="s2-latency">`, "<svg", `<td class="l">99.99 %</td>`)
	blocks := svgBlocks(page)
	if len(blocks) != 3 {
		t.Fatalf("%d SVG blocks, want 3 (bars wide and narrow, latency)", len(blocks))
	}
	twoDecimals := regexp.MustCompile(`="[^"]*\d\.\d{3,}`)
	for _, s := range blocks {
		parseSVG(t, s)
		if m := twoDecimals.FindString(s); m != "" {
			t.Errorf("number with more than two decimals in SVG: %s", m)
		}
	}
}

func TestSVGBarsHeightsWhiskersMissing(t *testing.T) {
	c := Chart{Kind: Bars, Title: "rps", Unit: "req/s", Categories: []string{"a", "b", "c"}, Series: []Series{
		{Name: "one", Points: []Point{{Y: 100, Lo: 90, Hi: 120}, {Y: 50, Lo: 50, Hi: 50}, {Missing: true}}},
		{Name: "two", Points: []Point{{Y: 200}, {Y: math.Inf(1)}}},
	}}
	es := parseSVG(t, chartSVG(c, sizeWide, "chart"))
	bars := svgElems(es, "rect", "bar")
	if len(bars) != 3 {
		t.Fatalf("%d bars, want 3 (missing, infinite and absent points draw none)", len(bars))
	}
	h100, h200 := svgAttr(t, bars[0], "height"), svgAttr(t, bars[1], "height")
	if r := h200 / h100; math.Abs(r-2) > 0.01 {
		t.Errorf("bar heights %v and %v: ratio %v, want 2", h100, h200, r)
	}
	if b0, b1 := svgAttr(t, bars[0], "y")+h100, svgAttr(t, bars[1], "y")+h200; math.Abs(b0-b1) > 0.01 {
		t.Errorf("bars stand on different baselines: %v, %v", b0, b1)
	}
	if got := bars[0].title; got != "one · a: 100 [90–120] req/s" {
		t.Errorf("tooltip %q", got)
	}
	if svgAttr(t, bars[0], "x") >= svgAttr(t, bars[1], "x") || svgAttr(t, bars[1], "x") >= svgAttr(t, bars[2], "x") {
		t.Error("bars are not in series then category order")
	}
	if n := len(svgElems(es, "g", "whisker")); n != 1 {
		t.Errorf("%d whiskers, want 1 (only where Hi > Lo)", n)
	}
	if n := len(svgElems(es, "rect", "swatch")); n != 2 {
		t.Errorf("%d legend entries, want 2", n)
	}
}

func TestRenderNoData(t *testing.T) {
	charts := []Chart{
		{Kind: Bars, Title: "empty"},
		{Kind: Bars, Title: "nan", Categories: []string{"a"}, Series: []Series{{Name: "s", Points: []Point{{Y: math.NaN(), Lo: math.NaN(), Hi: math.Inf(1)}}}}},
		{Kind: Lines, Title: "nan lines", LogX: true, Series: []Series{{Name: "s", Points: []Point{{X: math.NaN(), Y: 1}, {X: 10, Y: math.NaN()}, {X: 0, Y: 3}}}}},
	}
	for _, c := range charts {
		es := parseSVG(t, chartSVG(c, sizeWide, "chart"))
		if len(svgElems(es, "text", "nodata")) != 1 || len(svgElems(es, "rect", "bar"))+len(svgElems(es, "circle", "pt")) != 0 {
			t.Errorf("chart %q: want only a no-data text", c.Title)
		}
	}
	d := &Doc{Title: "x", Sections: []Section{{Title: "s", Charts: charts}}}
	for name, out := range map[string]string{"html": renderHTML(t, d), "markdown": renderMarkdown(t, d)} {
		if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
			t.Errorf("%s output contains NaN or Inf:\n%s", name, out)
		}
		if !strings.Contains(strings.ToLower(out), "no data") {
			t.Errorf("%s output does not say no data", name)
		}
	}
}

func TestSVGLinesLogX(t *testing.T) {
	c := Chart{Kind: Lines, Title: "lat", Unit: "ms", LogX: true, Series: []Series{
		{Name: "a", Points: []Point{{X: 100, Y: 3}, {X: 1, Y: 1}, {X: 10, Y: 2}}},
	}}
	pts := svgElems(parseSVG(t, chartSVG(c, sizeWide, "chart")), "circle", "pt")
	if len(pts) != 3 {
		t.Fatalf("%d markers, want 3", len(pts))
	}
	x1, x10, x100 := svgAttr(t, pts[0], "cx"), svgAttr(t, pts[1], "cx"), svgAttr(t, pts[2], "cx")
	if x1 >= x10 || math.Abs((x10-x1)-(x100-x10)) > 0.02 {
		t.Errorf("X=1,10,100 at %v,%v,%v: 10 is not halfway", x1, x10, x100)
	}
	if y1, y2 := svgAttr(t, pts[0], "cy"), svgAttr(t, pts[1], "cy"); y2 >= y1 {
		t.Error("a larger Y is not drawn higher")
	}

	es := parseSVG(t, chartSVG(testLatencyChart(), sizeWide, "chart"))
	if n := len(svgElems(es, "polyline", "line")); n != 2 {
		t.Errorf("%d lines, want 2", n)
	}
	svg := chartSVG(testLatencyChart(), sizeWide, "chart")
	requireInOrder(t, svg, ">50 %</text>", ">90 %</text>", ">99 %</text>", ">99.9 %</text>", ">99.99 %</text>")
	if got := svgElems(es, "circle", "pt")[1].title; got != "prepared-one · 90 %: 0.740 ms" {
		t.Errorf("tooltip %q: X=1/(1-0.9) should take the label of 10", got)
	}
}

func TestSVGNiceScale(t *testing.T) {
	for _, max := range []float64{0, -3, math.NaN(), 0.0007, 0.245, 1, 3, 9.99, 100, 101, 200, 8290, 123456, 7.5e6} {
		top, step := niceScale(max)
		ticks := int(math.Round(top/step)) + 1
		if ticks < 4 || ticks > 6 {
			t.Errorf("niceScale(%v) = %v by %v: %d ticks", max, top, step, ticks)
		}
		m := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9))
		if !(math.Abs(m-1) < 1e-9 || math.Abs(m-2) < 1e-9 || math.Abs(m-2.5) < 1e-9 || math.Abs(m-5) < 1e-9) {
			t.Errorf("niceScale(%v): step %v is not 1, 2, 2.5 or 5 × 10^k", max, step)
		}
		if max > 0 && (top < max || top-step >= max) {
			t.Errorf("niceScale(%v) = %v: not the first tick at or above max", max, top)
		}
	}
	for _, tc := range []struct {
		v, step, top float64
		want         string
	}{{2500, 2500, 10000, "2,500"}, {7.5, 2.5, 10, "7.5"}, {0.25, 0.05, 0.25, "0.25"}, {1.5e6, 5e5, 2e6, "1.5M"}, {0, 0.2, 1, "0.0"}} {
		if got := tickLabel(tc.v, tc.step, tc.top); got != tc.want {
			t.Errorf("tickLabel(%v, %v, %v) = %q, want %q", tc.v, tc.step, tc.top, got, tc.want)
		}
	}
}

func TestRenderFigure(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{8143.2, "8,143"}, {812.4, "812"}, {81.24, "81.2"}, {8.124, "8.12"}, {0.8124, "0.812"}, {0.08124, "0.0812"},
		{0, "0"}, {-1234, "-1,234"}, {math.NaN(), "–"}, {math.Inf(-1), "–"}} {
		if got := figure(tc.v); got != tc.want {
			t.Errorf("figure(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	if got := pointText(Point{Y: 5, Lo: 4, Hi: 6}); got != "5.00 [4.00–6.00]" {
		t.Errorf("pointText = %q", got)
	}
}

// TestLabelColumns: a table's label columns are left aligned in both
// renderings, its figures right aligned.
func TestLabelColumns(t *testing.T) {
	d := &Doc{Title: "t", Sections: []Section{{Title: "s", Tables: []Table{{
		Header: []string{"Case", "Variant", "Requests/s"}, Rows: [][]string{{"4 conns", "go", "100"}}, Labels: 2}}}}}
	var md, page strings.Builder
	if err := Markdown(&md, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| :--- | :--- | ---: |") {
		t.Errorf("markdown alignment row missing:\n%s", md.String())
	}
	if err := HTML(&page, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<td class="l">4 conns</td><td class="l">go</td><td>100</td>`) {
		t.Errorf("html label cells missing:\n%s", page.String())
	}
}

// TestSVGLinesLogY: on a log Y axis 10 lies halfway between 1 and 100,
// points at or below 0 are not drawn, and the axis is labelled at powers
// of ten.
func TestSVGLinesLogY(t *testing.T) {
	c := Chart{Kind: Lines, Title: "lat", Unit: "ms", LogY: true, Series: []Series{
		{Name: "a", Points: []Point{{X: 1, Y: 1}, {X: 2, Y: 10}, {X: 3, Y: 100}, {X: 4, Y: 0}}},
	}}
	svg := chartSVG(c, sizeWide, "chart")
	pts := svgElems(parseSVG(t, svg), "circle", "pt")
	if len(pts) != 3 {
		t.Fatalf("%d markers, want 3 (Y=0 has no place on a log axis)", len(pts))
	}
	y1, y10, y100 := svgAttr(t, pts[0], "cy"), svgAttr(t, pts[1], "cy"), svgAttr(t, pts[2], "cy")
	if !(y100 < y10 && y10 < y1) || math.Abs((y1-y10)-(y10-y100)) > 0.02 {
		t.Errorf("Y=1,10,100 at rows %v,%v,%v: 10 is not halfway", y1, y10, y100)
	}
	requireInOrder(t, svg, ">1</text>", ">2</text>", ">5</text>", ">10</text>", ">100</text>", "ms (log)")
	if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
		t.Error("a non-finite number in the SVG")
	}
	if chartHasData(Chart{Kind: Lines, LogY: true, Series: []Series{{Points: []Point{{X: 1, Y: 0}}}}}) {
		t.Error("a log chart with only Y=0 has data")
	}
}
