package report

import (
	"fmt"
	"html"
	"math"
	"strings"
	"unicode/utf8"
)

// yScale maps values to the rows of a plot area: linear from 0 to top, or
// logarithmic over the decades lo…hi (log10).
type yScale struct {
	a         plotArea
	log       bool
	top, step float64
	lo, hi    float64
}

// newYScale is the Y axis for values up to maxV (and, on a log axis, down
// to minV > 0).
func newYScale(a plotArea, log bool, minV, maxV float64) yScale {
	s := yScale{a: a, log: log && minV > 0 && finite(minV)}
	if s.log {
		s.lo, s.hi = logRange(minV, maxV)
	} else {
		s.top, s.step = niceScale(maxV)
	}
	return s
}

// y is the pixel row of v; on a log axis values at or below the bottom
// decade are drawn at the bottom.
func (s yScale) y(v float64) float64 {
	if !s.log {
		return s.a.y(v, s.top)
	}
	if v <= 0 {
		return s.a.bottom
	}
	l := math.Max(s.lo, math.Min(s.hi, math.Log10(v)))
	return s.a.bottom - (l-s.lo)/(s.hi-s.lo)*(s.a.bottom-s.a.top)
}

// draw draws the axis, its gridlines and labels, and the unit.
func (s yScale) draw(b *strings.Builder, unit string) {
	if s.log {
		yLogAxis(b, s.a, s.lo, s.hi, unit)
	} else {
		yAxis(b, s.a, s.top, s.step, unit)
	}
}

// barRange is the smallest positive and the largest value a Bars chart
// draws (whiskers included).
func barRange(c Chart) (lo, hi float64) {
	lo = math.Inf(1)
	for _, s := range c.Series {
		for i := range c.Categories {
			p := barPoint(s, i)
			if !drawable(p) {
				continue
			}
			hi = math.Max(hi, p.Y)
			if p.Y > 0 {
				lo = math.Min(lo, p.Y)
			}
			if hasWhisker(p) {
				hi = math.Max(hi, p.Hi)
				if p.Lo > 0 {
					lo = math.Min(lo, p.Lo)
				}
			}
		}
	}
	return lo, hi
}

// mixedMagnitudes reports whether the bars of a chart span so many orders
// that the small ones would vanish on a linear axis (a bar of 400 beside
// one of 52,000): the largest is 20 times the smallest or more.
func mixedMagnitudes(c Chart) bool {
	lo, hi := barRange(c)
	return finite(lo) && lo > 0 && hi >= 20*lo
}

// drawBars draws a Bars chart below row top: per category a group of one
// bar per series, with a whisker from Lo to Hi where Hi > Lo and the value
// written over the bar (turned upright when the bar is too narrow for it).
func drawBars(b *strings.Builder, c Chart, sz size, top float64) {
	svgW, svgH := sz.w, sz.h
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
	lo, hi := barRange(c)
	ys := newYScale(a, c.LogY, lo, hi)
	// Room above the tallest bar for its value label.
	if !ys.log {
		ys = newYScale(a, false, 0, hi*1.12)
	}
	ys.draw(b, c.Unit)

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
			y := ys.y(p.Y)
			tip := oneLine(s.Name) + " · " + oneLine(cat) + ": " + withUnit(pointText(p), c.Unit)
			fmt.Fprintf(b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
				svgNum(x), svgNum(y), svgNum(w), svgNum(a.bottom-y), palette[si%len(palette)], html.EscapeString(tip))
			labelY := y
			if hasWhisker(p) {
				cx, lo, hi := svgNum(x+w/2), svgNum(ys.y(p.Lo)), svgNum(ys.y(p.Hi))
				l, r := svgNum(x+w/4), svgNum(x+3*w/4)
				fmt.Fprintf(b, `<g class="whisker" stroke="#333"><line x1="%s" y1="%s" x2="%s" y2="%s"/><line x1="%s" y1="%s" x2="%s" y2="%s"/><line x1="%s" y1="%s" x2="%s" y2="%s"/></g>`,
					cx, lo, cx, hi, l, lo, r, lo, l, hi, r, hi)
				labelY = ys.y(p.Hi)
			}
			barValue(b, figure(p.Y), x+w/2, labelY, w, a)
		}
	}
}

// barValue writes a bar's value above it: level when it fits the bar's
// width, else upright (reading upwards) from just above the whisker, or
// inside the bar when the plot has no room above.
func barValue(b *strings.Builder, v string, cx, y, w float64, a plotArea) {
	tw := float64(utf8.RuneCountInString(v)) * charW
	if tw <= w+6 {
		fmt.Fprintf(b, `<text class="val" x="%s" y="%s" text-anchor="middle">%s</text>`, svgNum(cx), svgNum(y-4), html.EscapeString(v))
		return
	}
	x := cx + 4
	anchor, yy := "start", y-4
	if yy-tw < a.top-4 {
		anchor, yy = "end", y+4 // inside the bar, from its top down
	}
	cls := "val"
	if anchor == "end" {
		cls = "val in"
	}
	fmt.Fprintf(b, `<text class="%s" x="%s" y="%s" text-anchor="%s" transform="rotate(-90 %s %s)">%s</text>`,
		cls, svgNum(x), svgNum(yy), anchor, svgNum(x), svgNum(yy), html.EscapeString(v))
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
