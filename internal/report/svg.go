package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The drawing: a viewBox of one of a few sizes (see size), drawn at
// font-size 11 or more. Text widths are estimated (charW per character at
// font-size 11); the layout only needs them to decide where labels wrap,
// rotate or are skipped.
const (
	padLeft   = 64.0
	padRight  = 16.0
	charW     = 6.2
	maxLabel  = 28 // runes of a category label or legend entry drawn
	barMaxW   = 56.0
	lineInset = 12.0 // keeps the first and last X off the axes
)

// palette is Okabe and Ito's colour-blind-safe palette, darkest first;
// series beyond eight reuse it.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000"}

// plotArea is the rectangle, in viewBox units, the figures are drawn in.
type plotArea struct{ left, top, right, bottom float64 }

// y maps a value on a 0…top axis to its pixel row; values below 0 (which
// benchmark figures are not) are drawn at 0.
func (a plotArea) y(v, top float64) float64 {
	v = math.Max(0, math.Min(v, top))
	return a.bottom - v/top*(a.bottom-a.top)
}

// size is a chart's viewBox, in CSS pixels when drawn at its natural size.
type size struct{ w, h float64 }

// The sizes charts are drawn at: wide bar charts for desktop pages (drawn
// at 100 % of a column at least as wide), and small ones that are never
// scaled down (phones, and grids of small multiples on desktop).
var (
	sizeWide   = size{720, 360}
	sizeNarrow = size{340, 320}
	sizeSmall  = size{340, 240}
	sizePanel  = size{340, 220}
)

// chartSVG draws a chart as an inline SVG element of the given size:
// title, legend, a Y axis from 0 with nice ticks (or logarithmic, said on
// the axis), and the series as grouped bars or lines, each figure with a
// <title> tooltip. A chart without a finite value draws "no data". Every
// number written has at most two decimals and is finite. class is the
// element's CSS class ("chart wide", "chart small").
func chartSVG(c Chart, sz size, class string) string {
	var b strings.Builder
	if c.OverTime && len(c.Series) > 1 {
		// a panel's plot keeps its height however many rows its legend takes
		sz.h += float64(legendRows(c, sz)-1) * 18
	}
	svgW, svgH := sz.w, sz.h
	title := oneLine(c.Title)
	fmt.Fprintf(&b, `<svg class="%s" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s" font-family="sans-serif" font-size="11">`,
		class, svgNum(svgW), svgNum(svgH), svgNum(svgW), svgNum(svgH), html.EscapeString(title))
	if !c.OverTime {
		fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(title))
	}
	// Bold 13 px runs about 1.25 × charW a character; the title starts at 8.
	perLine := int((svgW - 16) / (charW * 1.25))
	titleLines, _ := wrapWords(title, perLine)
	if len(titleLines) > 2 {
		titleLines = []string{titleLines[0], truncate(strings.Join(titleLines[1:], " "), perLine)}
	}
	ty := 18.0
	for i, l := range titleLines {
		fmt.Fprintf(&b, `<text class="ct" x="%s" y="%s" font-size="13" font-weight="bold">%s</text>`, svgNum(min(padLeft, 8)), svgNum(ty+float64(i)*16), html.EscapeString(l))
	}
	ty += float64(len(titleLines)-1) * 16
	if !chartHasData(c) {
		fmt.Fprintf(&b, `<text class="nodata" x="%s" y="%s" text-anchor="middle" fill="#666">no data</text></svg>`, svgNum(svgW/2), svgNum(svgH/2))
		return b.String()
	}
	top := ty + 16
	if len(c.Series) > 1 || c.Kind == Bars {
		top = legend(&b, c, sz, ty+18)
	}
	if c.Kind == Lines {
		drawLines(&b, c, sz, top)
	} else {
		drawBars(&b, c, sz, top)
	}
	b.WriteString("</svg>")
	return b.String()
}

// legendRows is the number of rows legend draws c's entries in.
func legendRows(c Chart, sz size) int {
	rows, x := 1, padLeft
	for _, s := range c.Series {
		w := 22 + float64(utf8.RuneCountInString(truncate(oneLine(s.Name), maxLabel)))*charW + 14
		if x > padLeft && x+w > sz.w-padRight {
			x, rows = padLeft, rows+1
		}
		x += w
	}
	return rows
}

// legend draws one entry per series from row y, wrapping to more rows when
// needed, and returns the y below it.
func legend(b *strings.Builder, c Chart, sz size, y float64) float64 {
	svgW := sz.w
	x := padLeft
	for i, s := range c.Series {
		name := truncate(oneLine(s.Name), maxLabel)
		w := 22 + float64(utf8.RuneCountInString(name))*charW + 14
		if x > padLeft && x+w > svgW-padRight {
			x, y = padLeft, y+18
		}
		col := palette[i%len(palette)]
		if c.Kind == Lines {
			dash := ""
			if s.Dashed {
				dash = ` stroke-dasharray="5 3"`
			}
			fmt.Fprintf(b, `<line class="swatch" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"%s/>`,
				svgNum(x), svgNum(y-4), svgNum(x+16), svgNum(y-4), col, dash)
		} else {
			fmt.Fprintf(b, `<rect class="swatch" x="%s" y="%s" width="12" height="12" fill="%s"/>`, svgNum(x+2), svgNum(y-10), col)
		}
		fmt.Fprintf(b, `<text x="%s" y="%s">%s</text>`, svgNum(x+22), svgNum(y), html.EscapeString(name))
		x += w
	}
	return y + 12
}

// yAxis draws the gridlines and labels of a Y axis from 0 to top by step,
// the axis lines, and the unit along the axis.
func yAxis(b *strings.Builder, a plotArea, top, step float64, unit string) {
	n := int(math.Round(top / step))
	for i := 0; i <= n; i++ {
		v := float64(i) * step
		y := svgNum(a.y(v, top))
		fmt.Fprintf(b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#ddd"/>`, svgNum(a.left), y, svgNum(a.right), y)
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end" dy="4">%s</text>`, svgNum(a.left-6), y, html.EscapeString(tickLabel(v, step, top)))
	}
	fmt.Fprintf(b, `<path class="axis" d="M%s %sV%sH%s" fill="none" stroke="#333"/>`, svgNum(a.left), svgNum(a.top), svgNum(a.bottom), svgNum(a.right))
	if unit != "" {
		mid := svgNum((a.top + a.bottom) / 2)
		fmt.Fprintf(b, `<text class="unit" x="14" y="%s" text-anchor="middle" transform="rotate(-90 14 %s)">%s</text>`, mid, mid, html.EscapeString(unit))
	}
}

// logRange is the decades (log10) a log axis spans to show values from
// min to max: whole decades around them, at least one.
func logRange(min, max float64) (lo, hi float64) {
	lo, hi = math.Floor(math.Log10(min)), math.Ceil(math.Log10(max))
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi
}

// yLogAxis draws a logarithmic Y axis over the decades lo…hi (log10):
// gridlines and labels at 1, 2 and 5 × each power of ten (the decades
// alone when they are more than three), the axis lines and the unit.
func yLogAxis(b *strings.Builder, a plotArea, lo, hi float64, unit string) {
	mults := []float64{1, 2, 5}
	// 1, 2 and 5 need room: about 14 units between labels.
	if hi-lo > 3 || (a.bottom-a.top)/(hi-lo) < 48 {
		mults = []float64{1}
	}
	for d := lo; d <= hi; d++ {
		for _, m := range mults {
			v := m * math.Pow(10, d)
			if math.Log10(v) > hi+1e-9 {
				break
			}
			y := svgNum(a.bottom - (math.Log10(v)-lo)/(hi-lo)*(a.bottom-a.top))
			fmt.Fprintf(b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#ddd"/>`, svgNum(a.left), y, svgNum(a.right), y)
			fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end" dy="4">%s</text>`, svgNum(a.left-6), y, html.EscapeString(strconv.FormatFloat(v, 'g', -1, 64)))
		}
	}
	fmt.Fprintf(b, `<path class="axis" d="M%s %sV%sH%s" fill="none" stroke="#333"/>`, svgNum(a.left), svgNum(a.top), svgNum(a.bottom), svgNum(a.right))
	if unit != "" {
		mid := svgNum((a.top + a.bottom) / 2)
		fmt.Fprintf(b, `<text class="unit" x="14" y="%s" text-anchor="middle" transform="rotate(-90 14 %s)">%s (log)</text>`, mid, mid, html.EscapeString(unit))
	}
}

// niceScale returns an axis from 0 to top >= max in steps of 1, 2, 2.5 or
// 5 × 10^k, giving 4 to 6 ticks with 0. A max that is not positive gets
// the axis 0…1.
func niceScale(max float64) (top, step float64) {
	if !finite(max) || max <= 0 {
		max = 1
	}
	raw := max / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		step = m * mag
		if step >= raw*(1-1e-9) {
			break
		}
	}
	return math.Ceil(max/step-1e-9) * step, step
}

// tickLabel formats the tick v of an axis stepping by step up to top, with
// just the decimals the step needs ("2.5", "5.0"), thousands grouped, and
// millions as "M" on axes that reach them.
func tickLabel(v, step, top float64) string {
	suffix := ""
	if top >= 1e6 {
		v, step, suffix = v/1e6, step/1e6, "M"
	}
	d := 0
	for ; d < 6; d++ {
		s := step * math.Pow(10, float64(d))
		if math.Abs(s-math.Round(s)) < 1e-6*s {
			break
		}
	}
	if d == 0 {
		return count(int64(math.Round(v))) + suffix
	}
	return strconv.FormatFloat(v, 'f', d, 64) + suffix
}

// svgNum writes a coordinate with at most one decimal (a tenth of a CSS
// pixel at natural size); a value that is
// not finite (which the drawing guards against) is written as 0 so the
// SVG stays valid.
func svgNum(v float64) string {
	if !finite(v) {
		return "0"
	}
	r := math.Round(v*10) / 10
	if r == 0 {
		r = 0 // no "-0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// withUnit appends a unit to a figure: "8,143 req/s".
func withUnit(s, unit string) string {
	if unit == "" || s == noFigure {
		return s
	}
	return s + " " + unit
}

// truncate shortens s to n runes, ending with "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 2 {
		return "…"
	}
	return string([]rune(s)[:n-1]) + "…"
}

// wrapWords breaks s into lines of at most width runes at spaces; ok is
// false if a single word is longer than width.
func wrapWords(s string, width int) (lines []string, ok bool) {
	ok = true
	for _, w := range strings.Fields(s) {
		n := len(lines)
		switch {
		case n > 0 && utf8.RuneCountInString(lines[n-1])+1+utf8.RuneCountInString(w) <= width:
			lines[n-1] += " " + w
		default:
			lines = append(lines, w)
		}
		if utf8.RuneCountInString(w) > width {
			ok = false
		}
	}
	if len(lines) == 0 {
		lines = []string{""}
	}
	return lines, ok
}
