package history

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/benchrig/benchrig/internal/changepoint"
	"github.com/benchrig/benchrig/internal/report"
)

// ChangePoints is the hook a change-point detector fills: given a
// series' per-run medians in time order, where the series changed
// (changepoint.Point: the first run of the new level, the change with its
// interval, the p-value). Show marks them ("<< change" in text with the
// change, a band on the chart). Nil marks nothing.
type ChangePoints func(medians []float64) []changepoint.Point

// marks are the valid change points of s, by run index.
func marks(s *Series, cp ChangePoints) map[int]changepoint.Point {
	out := map[int]changepoint.Point{}
	if cp == nil {
		return out
	}
	for _, p := range cp(s.Medians()) {
		if p.Index >= 0 && p.Index < len(s.Points) {
			out[p.Index] = p
		}
	}
	return out
}

// describeChange is a change point as the text shows it after the
// marker: the change of the medians with its interval, and p.
func describeChange(p changepoint.Point) string {
	return fmt.Sprintf("%+.1f %% [%+.1f %%, %+.1f %%], p = %.3g", p.ChangePct, p.Low, p.High, p.P)
}

// ChangeMarker follows the text line of a run where a change point is,
// before the change itself.
const ChangeMarker = "<< change"

// Show prints each series: a heading (suite, cell, variant, host,
// branch, figure and unit), then one line per run in time order: its
// start, revision, and median [min–max] over the run's repeats, with
// ChangeMarker where cp finds a change and a note where the resolved
// suite differs from the run before.
func Show(w io.Writer, series []Series, cp ChangePoints) error {
	if len(series) == 0 {
		_, err := fmt.Fprintln(w, "no series: no run holds the figure for that suite and cell (benchrig history list shows the runs)")
		return err
	}
	for i := range series {
		s := &series[i]
		if i > 0 {
			fmt.Fprintln(w)
		}
		unit := ""
		if s.Figure.Unit != s.Figure.Name {
			unit = " (" + s.Figure.Unit + ")"
		}
		fmt.Fprintf(w, "%s · %s · variant %s · %s · branch %s · %s%s\n", s.Suite, s.Cell, s.Variant, hostLabel(s.Host), s.Branch, s.Figure.Name, unit)
		m := marks(s, cp)
		for j, p := range s.Points {
			line := fmt.Sprintf("  %s  %-14s %s [%s–%s]", p.Started.UTC().Format("2006-01-02 15:04:05Z"), p.Revision, num(p.Median), num(p.Min), num(p.Max))
			if j > 0 && p.SuiteHash != s.Points[j-1].SuiteHash {
				line += "  (the suite changed)"
			}
			if c, ok := m[j]; ok {
				line += "  " + ChangeMarker + " " + describeChange(c)
			}
			if _, err := fmt.Fprintln(w, line); err != nil {
				return err
			}
		}
	}
	return nil
}

// hostLabel names a series' host fingerprint.
func hostLabel(h string) string {
	if h == "" {
		return "any host"
	}
	return "host " + h
}

// num formats a figure with four significant digits, no exponent.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 3-int(math.Floor(math.Log10(a))), 64)
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

// Doc is the trends page of series: a section per suite, cell and host,
// one small line chart per figure over the run index (the median, a band
// from min to max), change points shaded. report.HTML draws it.
func Doc(series []Series, cp ChangePoints) *report.Doc {
	d := &report.Doc{Title: "benchrig history: trends"}
	if len(series) == 0 {
		d.Notes = append(d.Notes, "No series: no run holds the figures for that suite and cell.")
		return d
	}
	index := map[string]int{}
	var runs int
	for i := range series {
		s := &series[i]
		runs = max(runs, len(s.Points))
		title := fmt.Sprintf("%s · %s", s.Suite, s.Cell)
		key := title + "\x00" + s.Host + "\x00" + s.Branch
		at, ok := index[key]
		if !ok {
			at = len(d.Sections)
			index[key] = at
			d.Sections = append(d.Sections, report.Section{Title: title,
				Text: []string{fmt.Sprintf("Variant %s, %s, branch %s. X is the run index in start order (0 is the oldest run); the line is each run's median over its repeats, the band its min–max.", s.Variant, hostLabel(s.Host), s.Branch)}})
		}
		d.Sections[at].Charts = append(d.Sections[at].Charts, chart(s, cp))
	}
	d.Meta = []report.KV{{Key: "Series", Value: strconv.Itoa(len(series))}, {Key: "Runs (longest series)", Value: strconv.Itoa(runs)}}
	return d
}

// chart is one series as a small line chart.
func chart(s *Series, cp ChangePoints) report.Chart {
	c := report.Chart{Kind: report.Lines, Title: s.Figure.Name + " · " + s.Variant, Unit: s.Figure.Unit, XUnit: "run",
		XMin: 0, XMax: math.Max(float64(len(s.Points)-1), 1)}
	sr := report.Series{Name: s.Variant}
	for i, p := range s.Points {
		sr.Points = append(sr.Points, report.Point{X: float64(i), Y: p.Median, Lo: p.Min, Hi: p.Max})
	}
	c.Series = []report.Series{sr}
	var idx []string
	m := marks(s, cp)
	for i := range s.Points {
		if _, ok := m[i]; ok {
			c.Bands = append(c.Bands, report.Band{Name: "change", From: float64(i) - 0.5, To: float64(i) + 0.5})
			idx = append(idx, strconv.Itoa(i))
		}
	}
	if len(idx) > 0 {
		c.Title += " (change at run " + strings.Join(idx, ", ") + ")"
	}
	return c
}
