package report

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// noFigure stands in a cell for a value that is missing or not finite, so
// that no renderer ever prints "NaN" or "+Inf".
const noFigure = "–"

// figure formats a value for a reader with about three significant digits:
// 8,143 · 812 · 81.2 · 8.12 · 0.812 · 0.0812. Large values keep all their
// integer digits, grouped by thousands.
func figure(v float64) string {
	return figureTo(v, figureDecimals(v))
}

// figureDecimals is the number of decimals figure gives v.
func figureDecimals(v float64) int {
	a := math.Abs(v)
	switch {
	case a >= 100 || a == 0 || !finite(a):
		return 0
	case a >= 10:
		return 1
	case a < 1e-6:
		return -1 // scientific notation
	default:
		// Three significant digits after the leading zeros.
		return 2 - int(math.Floor(math.Log10(a)))
	}
}

// figureTo formats v with the given decimals (-1: scientific), grouping
// the thousands of a whole number.
func figureTo(v float64, decimals int) string {
	switch {
	case !finite(v):
		return noFigure
	case v == 0:
		return "0"
	case math.Abs(v) >= 1e15 || decimals < 0:
		return strconv.FormatFloat(v, 'g', 3, 64)
	case decimals == 0 && math.Abs(v) >= 1000:
		return count(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// hasWhisker reports whether a point carries a min–max range to draw.
func hasWhisker(p Point) bool {
	return finite(p.Lo) && finite(p.Hi) && p.Hi > p.Lo
}

// drawable reports whether a point has a value to draw or print.
func drawable(p Point) bool { return !p.Missing && finite(p.Y) }

// pointText formats a point as "Y [Lo–Hi]", or "Y" without a range.
func pointText(p Point) string {
	if !drawable(p) {
		return noFigure
	}
	if hasWhisker(p) {
		// One precision for the three, that of the largest.
		d := figureDecimals(math.Max(math.Abs(p.Y), math.Max(math.Abs(p.Lo), math.Abs(p.Hi))))
		return figureTo(p.Y, d) + " [" + figureTo(p.Lo, d) + "–" + figureTo(p.Hi, d) + "]"
	}
	return figure(p.Y)
}

// barPoint returns the point of series s for category i of a Bars chart;
// a series shorter than the categories is missing the rest.
func barPoint(s Series, i int) Point {
	if i < len(s.Points) {
		return s.Points[i]
	}
	return Point{Missing: true}
}

// sameX reports whether two X values are the same position: builders
// compute X as 1/(1-q), which lands next to, not on, the XLabels keys
// (1/(1-0.9) = 9.999999999999998).
func sameX(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// xLabel names the X value x of a Lines chart: its XLabels entry if there
// is one, else the number.
func xLabel(c Chart, x float64) string {
	if l, ok := c.XLabels[x]; ok {
		return l
	}
	keys := make([]float64, 0, len(c.XLabels))
	for k := range c.XLabels {
		keys = append(keys, k)
	}
	sort.Float64s(keys)
	for _, k := range keys {
		if sameX(k, x) {
			return c.XLabels[k]
		}
	}
	return figure(x)
}

// lineXs returns the distinct finite X values of a Lines chart's points,
// in increasing order.
func lineXs(c Chart) []float64 {
	var xs []float64
	for _, s := range c.Series {
		for _, p := range s.Points {
			if drawable(p) && finite(p.X) {
				xs = append(xs, p.X)
			}
		}
	}
	sort.Float64s(xs)
	out := xs[:0]
	for _, x := range xs {
		if len(out) == 0 || !sameX(out[len(out)-1], x) {
			out = append(out, x)
		}
	}
	return out
}

// chartHasData reports whether a chart has at least one value to draw.
func chartHasData(c Chart) bool {
	for _, s := range c.Series {
		if c.Kind == Bars {
			for i := range c.Categories {
				if drawable(barPoint(s, i)) {
					return true
				}
			}
			continue
		}
		for _, p := range s.Points {
			if drawable(p) && finite(p.X) && (!c.LogX || p.X > 0) && (!c.LogY || p.Y > 0) {
				return true
			}
		}
	}
	return false
}

// chartCaption is a chart's title with its unit: "Requests/s (req/s)".
func chartCaption(c Chart) string {
	if c.Unit == "" {
		return c.Title
	}
	return c.Title + " (" + c.Unit + ")"
}

// chartTable turns a chart into the table of its figures, for formats that
// cannot draw (Markdown) and for copying out of the HTML page. Bars: one
// row per category, one column per series, cells "Y [Lo–Hi]". Lines: one
// row per X value (named by XLabels), one column per series, cells Y.
func chartTable(c Chart) Table {
	t := Table{Caption: chartCaption(c), Header: []string{""}}
	for _, s := range c.Series {
		t.Header = append(t.Header, s.Name)
	}
	if c.Kind == Bars {
		for i, cat := range c.Categories {
			row := []string{cat}
			for _, s := range c.Series {
				row = append(row, pointText(barPoint(s, i)))
			}
			t.Rows = append(t.Rows, row)
		}
		return t
	}
	for _, x := range lineXs(c) {
		row := []string{xLabel(c, x)}
		for _, s := range c.Series {
			cell := noFigure
			for _, p := range s.Points {
				if drawable(p) && sameX(p.X, x) {
					cell = figure(p.Y)
					break
				}
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// tableWidth returns how many columns a table needs: the longest of its
// header and rows, so ragged rows can be padded.
func tableWidth(t Table) int {
	n := len(t.Header)
	for _, r := range t.Rows {
		if len(r) > n {
			n = len(r)
		}
	}
	return n
}

// padCells returns cells extended with empty strings to n cells.
func padCells(cells []string, n int) []string {
	out := make([]string, n)
	copy(out, cells)
	return out
}

// oneLine joins the lines of s with spaces, for headings and titles.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
