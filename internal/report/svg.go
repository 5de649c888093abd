package report

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The drawing: a fixed viewBox the page scales to its width. Text widths
// are estimated (charW per character at font-size 11); the layout only
// needs them to decide where labels wrap, rotate or are skipped.
const (
	svgW      = 720.0
	svgH      = 360.0
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

// chartSVG draws a chart as an inline SVG element: title, legend, a Y axis
// from 0 with nice ticks, and the series as grouped bars or lines, each
// figure with a <title> tooltip. A chart without a finite value draws
// "no data". Every number written has at most two decimals and is finite.
func chartSVG(c Chart) string {
	var b strings.Builder
	title := oneLine(c.Title)
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %s %s" width="100%%" role="img" aria-label="%s" font-family="sans-serif" font-size="11">`,
		svgNum(svgW), svgNum(svgH), html.EscapeString(title))
	fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(title))
	fmt.Fprintf(&b, `<text class="ct" x="%s" y="20" font-size="14" font-weight="bold">%s</text>`, svgNum(padLeft), html.EscapeString(title))
	if !chartHasData(c) {
		fmt.Fprintf(&b, `<text class="nodata" x="%s" y="%s" text-anchor="middle" fill="#666">no data</text></svg>`, svgNum(svgW/2), svgNum(svgH/2))
		return b.String()
	}
	top := legend(&b, c, 34)
	if c.Kind == Lines {
		drawLines(&b, c, top)
	} else {
		drawBars(&b, c, top)
	}
	b.WriteString("</svg>")
	return b.String()
}

// legend draws one entry per series from row y, wrapping to more rows when
// needed, and returns the y below it.
func legend(b *strings.Builder, c Chart, y float64) float64 {
	x := padLeft
	for i, s := range c.Series {
		name := truncate(oneLine(s.Name), maxLabel)
		w := 22 + float64(utf8.RuneCountInString(name))*charW + 14
		if x > padLeft && x+w > svgW-padRight {
			x, y = padLeft, y+18
		}
		col := palette[i%len(palette)]
		if c.Kind == Lines {
			fmt.Fprintf(b, `<line class="swatch" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"/>`,
				svgNum(x), svgNum(y-4), svgNum(x+16), svgNum(y-4), col)
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

// drawBars draws a Bars chart below row top: per category a group of one
// bar per series, with a whisker from Lo to Hi where Hi > Lo.
func drawBars(b *strings.Builder, c Chart, top float64) {
	nCat := float64(len(c.Categories))
	groupW := (svgW - padLeft - padRight) / nCat
	labels, rotate := categoryLabels(c.Categories, groupW)
	bottom := svgH - 34
	if rotate {
		longest := 0
		for _, l := range labels {
			longest = max(longest, utf8.RuneCountInString(l[0]))
		}
		bottom = svgH - (22 + float64(longest)*charW*math.Sin(labelAngle*math.Pi/180))
	}
	a := plotArea{left: padLeft, top: top + 8, right: svgW - padRight, bottom: bottom}

	maxV := 0.0
	for _, s := range c.Series {
		for i := range c.Categories {
			if p := barPoint(s, i); drawable(p) {
				maxV = math.Max(maxV, p.Y)
				if hasWhisker(p) {
					maxV = math.Max(maxV, p.Hi)
				}
			}
		}
	}
	yTop, step := niceScale(maxV)
	yAxis(b, a, yTop, step, c.Unit)

	barW := math.Min(groupW*0.8/float64(len(c.Series)), barMaxW)
	for i, cat := range c.Categories {
		gx := a.left + float64(i)*groupW
		categoryLabel(b, cat, labels[i], rotate, gx+groupW/2, a.bottom)
		x0 := gx + (groupW-barW*float64(len(c.Series)))/2
		for si, s := range c.Series {
			p := barPoint(s, i)
			if !drawable(p) {
				continue
			}
			x := x0 + float64(si)*barW + barW*0.08
			w := barW * 0.84
			y := a.y(p.Y, yTop)
			tip := oneLine(s.Name) + " · " + oneLine(cat) + ": " + withUnit(pointText(p), c.Unit)
			fmt.Fprintf(b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
				svgNum(x), svgNum(y), svgNum(w), svgNum(a.bottom-y), palette[si%len(palette)], html.EscapeString(tip))
			if hasWhisker(p) {
				cx, lo, hi := svgNum(x+w/2), svgNum(a.y(p.Lo, yTop)), svgNum(a.y(p.Hi, yTop))
				l, r := svgNum(x+w/4), svgNum(x+3*w/4)
				fmt.Fprintf(b, `<g class="whisker" stroke="#333"><line x1="%s" y1="%s" x2="%s" y2="%s"/><line x1="%s" y1="%s" x2="%s" y2="%s"/><line x1="%s" y1="%s" x2="%s" y2="%s"/></g>`,
					cx, lo, cx, hi, l, lo, r, lo, l, hi, r, hi)
			}
		}
	}
}

// labelAngle is the slant, in degrees, of category labels too long to
// stand under their group.
const labelAngle = 35

// categoryLabels wraps each category label to the width of its group, in
// at most two lines; if one does not fit, all are drawn on one slanted
// line instead, cut to maxLabel runes and to the room left of the group.
func categoryLabels(cats []string, groupW float64) (labels [][]string, rotate bool) {
	width := int((groupW - 4) / charW)
	for _, c := range cats {
		lines, ok := wrapWords(oneLine(c), width)
		if !ok || len(lines) > 2 {
			rotate = true
		}
		labels = append(labels, lines)
	}
	if rotate {
		perRune := charW * math.Cos(labelAngle*math.Pi/180)
		for i, c := range cats {
			room := int((padLeft + (float64(i)+0.5)*groupW - 4) / perRune)
			labels[i] = []string{truncate(oneLine(c), min(maxLabel, room))}
		}
	}
	return labels, rotate
}

// categoryLabel draws the label of the group centred on x under the plot.
func categoryLabel(b *strings.Builder, cat string, lines []string, rotate bool, x, bottom float64) {
	y := bottom + 16
	if rotate {
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end" transform="rotate(-%d %s %s)"><title>%s</title>%s</text>`,
			svgNum(x), svgNum(y), labelAngle, svgNum(x), svgNum(y), html.EscapeString(oneLine(cat)), html.EscapeString(lines[0]))
		return
	}
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">`, svgNum(x), svgNum(y))
	for i, l := range lines {
		fmt.Fprintf(b, `<tspan x="%s" dy="%d">%s</tspan>`, svgNum(x), min(i, 1)*13, html.EscapeString(l))
	}
	b.WriteString("</text>")
}

// drawLines draws a Lines chart below row top: each series as a polyline
// with a marker per point, over an X axis that is logarithmic when LogX
// and ticked at the XLabels keys (or, without labels, at the data's X).
func drawLines(b *strings.Builder, c Chart, top float64) {
	usable := func(x float64) bool { return finite(x) && (!c.LogX || x > 0) }
	shown := func(p Point) bool { return drawable(p) && usable(p.X) && (!c.LogY || p.Y > 0) }
	tr := func(x float64) float64 { return x }
	if c.LogX {
		tr = math.Log10
	}
	var ticks []float64
	for x := range c.XLabels {
		if usable(x) {
			ticks = append(ticks, x)
		}
	}
	sort.Float64s(ticks)
	var data []float64
	maxY, minY := 0.0, math.Inf(1)
	for _, x := range lineXs(c) {
		if usable(x) {
			data = append(data, x)
		}
	}
	for _, s := range c.Series {
		for _, p := range s.Points {
			if shown(p) {
				maxY, minY = math.Max(maxY, p.Y), math.Min(minY, p.Y)
			}
		}
	}
	if len(ticks) == 0 {
		ticks = data
	}
	all := append(append([]float64(nil), ticks...), data...)
	t0, t1 := tr(all[0]), tr(all[0])
	for _, x := range all {
		t0, t1 = math.Min(t0, tr(x)), math.Max(t1, tr(x))
	}
	if t1-t0 < 1e-12 {
		t0, t1 = t0-0.5, t1+0.5
	}
	a := plotArea{left: padLeft, top: top + 8, right: svgW - padRight - 8, bottom: svgH - 40}
	px := func(x float64) float64 {
		return a.left + lineInset + (tr(x)-t0)/(t1-t0)*(a.right-a.left-2*lineInset)
	}

	var py func(float64) float64 // a value's pixel row
	if c.LogY {
		lo, hi := logRange(minY, maxY)
		py = func(v float64) float64 {
			return a.bottom - (math.Log10(v)-lo)/(hi-lo)*(a.bottom-a.top)
		}
		yLogAxis(b, a, lo, hi, c.Unit)
	} else {
		yTop, step := niceScale(maxY)
		py = func(v float64) float64 { return a.y(v, yTop) }
		yAxis(b, a, yTop, step, c.Unit)
	}
	lastRight := math.Inf(-1)
	for _, x := range ticks {
		xp := px(x)
		fmt.Fprintf(b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#eee"/>`, svgNum(xp), svgNum(a.top), svgNum(xp), svgNum(a.bottom))
		label := xLabel(c, x)
		half := float64(utf8.RuneCountInString(label)) * charW / 2
		if xp-half < lastRight+4 {
			continue // would overlap the previous label
		}
		lastRight = xp + half
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, svgNum(xp), svgNum(a.bottom+16), html.EscapeString(label))
	}

	for si, s := range c.Series {
		var pts []Point
		for _, p := range s.Points {
			if shown(p) {
				pts = append(pts, p)
			}
		}
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		col := palette[si%len(palette)]
		if len(pts) > 1 {
			coords := make([]string, len(pts))
			for i, p := range pts {
				coords[i] = svgNum(px(p.X)) + "," + svgNum(py(p.Y))
			}
			fmt.Fprintf(b, `<polyline class="line" points="%s" fill="none" stroke="%s" stroke-width="2"/>`, strings.Join(coords, " "), col)
		}
		for _, p := range pts {
			tip := oneLine(s.Name) + " · " + xLabel(c, p.X) + ": " + withUnit(pointText(p), c.Unit)
			fmt.Fprintf(b, `<circle class="pt" cx="%s" cy="%s" r="3" fill="%s"><title>%s</title></circle>`,
				svgNum(px(p.X)), svgNum(py(p.Y)), col, html.EscapeString(tip))
		}
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
	if hi-lo > 3 {
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

// svgNum writes a coordinate with at most two decimals; a value that is
// not finite (which the drawing guards against) is written as 0 so the
// SVG stays valid.
func svgNum(v float64) string {
	if !finite(v) {
		return "0"
	}
	r := math.Round(v*100) / 100
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
