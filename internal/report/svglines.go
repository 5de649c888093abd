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

// maxMarkers is the most points a series may have and still get a marker
// (with its tooltip) on each: over-time lines of many seconds are lines.
const maxMarkers = 12

// drawLines draws a Lines chart below row top: the bands (phases), then
// each series as a polyline over the band of its min–max spread, with a
// marker per point when they are few, over an X axis that is logarithmic
// when LogX, fixed to XMin…XMax when given, and ticked at the XLabels keys
// (or, without labels, at nice steps of XUnit, or at the data's X).
func drawLines(b *strings.Builder, c Chart, sz size, top float64) {
	svgW, svgH := sz.w, sz.h
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
	for _, x := range lineXs(c) {
		if usable(x) {
			data = append(data, x)
		}
	}
	maxY, minY := 0.0, math.Inf(1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			if shown(p) {
				maxY, minY = math.Max(maxY, p.Y), math.Min(minY, p.Y)
				if hasWhisker(p) {
					maxY = math.Max(maxY, p.Hi)
					if p.Lo > 0 {
						minY = math.Min(minY, p.Lo)
					}
				}
			}
		}
	}
	fixed := c.XMax > c.XMin && !c.LogX
	var t0, t1 float64
	if fixed {
		t0, t1 = c.XMin, c.XMax
		if len(ticks) == 0 {
			ticks = timeTicks(t0, t1, svgW)
		}
	} else {
		if len(ticks) == 0 {
			ticks = data
		}
		all := append(append([]float64(nil), ticks...), data...)
		t0, t1 = tr(all[0]), tr(all[0])
		for _, x := range all {
			t0, t1 = math.Min(t0, tr(x)), math.Max(t1, tr(x))
		}
	}
	if t1-t0 < 1e-12 {
		t0, t1 = t0-0.5, t1+0.5
	}
	bandStrip := 0.0
	if len(c.Bands) > 0 {
		bandStrip = 14
	}
	bottom := svgH - 40
	if c.XUnit != "" {
		bottom = svgH - 44
	}
	a := plotArea{left: padLeft, top: top + 8 + bandStrip, right: svgW - padRight - 8, bottom: bottom}
	inset := lineInset
	if fixed {
		inset = 0
	}
	px := func(x float64) float64 {
		return a.left + inset + (tr(x)-t0)/(t1-t0)*(a.right-a.left-2*inset)
	}
	drawBands(b, c.Bands, a, px, t0, t1)

	if c.OverTime && !c.LogY {
		maxY *= 1.08 // a flat line at the target rate stays off the top edge
	}
	ys := newYScale(a, c.LogY, minY, maxY)
	ys.draw(b, c.Unit)
	lastRight := math.Inf(-1)
	for _, x := range ticks {
		xp := px(x)
		if xp < a.left-0.5 || xp > a.right+0.5 {
			continue
		}
		label := xLabel(c, x)
		if fixed && len(c.XLabels) == 0 {
			label = strconv.FormatFloat(math.Round(x*100)/100+0, 'f', -1, 64)
			if label == "-0" {
				label = "0"
			}
		} else {
			fmt.Fprintf(b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#eee"/>`, svgNum(xp), svgNum(a.top), svgNum(xp), svgNum(a.bottom))
		}
		half := float64(utf8.RuneCountInString(label)) * charW / 2
		if xp-half < lastRight+4 {
			continue // would overlap the previous label
		}
		lastRight = xp + half
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, svgNum(xp), svgNum(a.bottom+16), html.EscapeString(label))
	}
	if c.XUnit != "" {
		fmt.Fprintf(b, `<text class="unit" x="%s" y="%s" text-anchor="middle">%s</text>`, svgNum((a.left+a.right)/2), svgNum(a.bottom+32), html.EscapeString(c.XUnit))
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
		if spread := spreadPath(pts, px, ys); spread != "" {
			fmt.Fprintf(b, `<path class="spread" d="%s" fill="%s" fill-opacity="0.18" stroke="none"/>`, spread, col)
		}
		if len(pts) > 1 {
			coords := make([]string, len(pts))
			for i, p := range pts {
				coords[i] = svgNum(px(p.X)) + "," + svgNum(ys.y(p.Y))
			}
			dash := ""
			if s.Dashed {
				dash = ` stroke-dasharray="5 3"`
			}
			fmt.Fprintf(b, `<polyline class="line" points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`, strings.Join(coords, " "), col, dash)
		}
		// Over-time lines get no markers (a lone point does: it has no line).
		if len(pts) > maxMarkers || c.OverTime && len(pts) > 1 {
			continue
		}
		for _, p := range pts {
			tip := oneLine(s.Name) + " · " + xLabel(c, p.X) + ": " + withUnit(pointText(p), c.Unit)
			fmt.Fprintf(b, `<circle class="pt" cx="%s" cy="%s" r="3" fill="%s"><title>%s</title></circle>`,
				svgNum(px(p.X)), svgNum(ys.y(p.Y)), col, html.EscapeString(tip))
		}
	}
}

// spreadPath is the outline of the band from each point's Lo to its Hi
// (the repeats' min and max), or "" when no point has a spread.
func spreadPath(pts []Point, px func(float64) float64, ys yScale) string {
	n := 0
	for _, p := range pts {
		if hasWhisker(p) {
			n++
		}
	}
	if n == 0 || len(pts) < 2 {
		return ""
	}
	var d strings.Builder
	for i, p := range pts {
		hi := p.Y
		if hasWhisker(p) {
			hi = p.Hi
		}
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		d.WriteString(cmd + svgNum(px(p.X)) + " " + svgNum(ys.y(hi)))
	}
	for i := len(pts) - 1; i >= 0; i-- {
		p := pts[i]
		lo := p.Y
		if hasWhisker(p) {
			lo = p.Lo
		}
		d.WriteString("L" + svgNum(px(p.X)) + " " + svgNum(ys.y(lo)))
	}
	d.WriteString("Z")
	return d.String()
}

// bandFills are the shades of the phases, by name; other bands alternate
// two greys.
var bandFills = map[string]string{
	"baseline": "#eef1f4", "warmup": "#fdf1dc", "warm-up": "#fdf1dc", "settle": "#eef1f4",
	"load": "#e3f0fa", "recovery": "#e8f5ee",
}

// drawBands shades each band over the plot's height and names it in the
// strip above the plot: the whole name where it fits, else its first
// letters (the section's text names the phases in order).
func drawBands(b *strings.Builder, bands []Band, a plotArea, px func(float64) float64, t0, t1 float64) {
	for i, band := range bands {
		from, to := math.Max(band.From, t0), math.Min(band.To, t1)
		if !finite(from) || !finite(to) || to <= from {
			continue
		}
		x0, x1 := px(from), px(to)
		fill, ok := bandFills[band.Name]
		if !ok {
			fill = []string{"#eef1f4", "#f6f7f9"}[i%2]
		}
		name := oneLine(band.Name)
		fmt.Fprintf(b, `<rect class="band" x="%s" y="%s" width="%s" height="%s" fill="%s"/>`,
			svgNum(x0), svgNum(a.top), svgNum(x1-x0), svgNum(a.bottom-a.top), fill)
		label := bandLabel(name, x1-x0)
		if label == "" {
			continue
		}
		fmt.Fprintf(b, `<text class="bandname" x="%s" y="%s" text-anchor="middle">%s</text>`, svgNum((x0+x1)/2), svgNum(a.top-4), html.EscapeString(label))
	}
}

// bandLabel is a band's name if it fits width, else its first letter if
// that fits, else "".
func bandLabel(name string, width float64) string {
	for _, l := range []string{name, truncateBare(name, 1)} {
		if float64(utf8.RuneCountInString(l))*charW+2 <= width {
			return l
		}
	}
	return ""
}

// truncateBare is the first n runes of s, without an ellipsis.
func truncateBare(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// timeTicks are nice ticks from t0 to t1 for an axis of the given width:
// at most one per 44 viewBox units.
func timeTicks(t0, t1, width float64) []float64 {
	n := max(2, int(width/60))
	raw := (t1 - t0) / float64(n)
	if raw <= 0 || !finite(raw) {
		return []float64{t0}
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		step = m * mag
		if step >= raw {
			break
		}
	}
	var out []float64
	for v := math.Ceil(t0/step-1e-9) * step; v <= t1+1e-9; v += step {
		out = append(out, v)
	}
	return out
}
