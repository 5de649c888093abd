package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/benchrig/benchrig/internal/result"
)

// maxMetricSeries bounds the metric lines drawn in one chart (the palette
// has eight colours; RSS and PSS take two).
const maxMetricSeries = 6

// metricSeries are the target's own metrics of s on its time axis, split
// into the series in bytes (drawn in MiB beside RSS) and the others (a
// panel of their own), each sorted by name.
func metricSeries(s *result.Sample, ax timeAxis) (bytes, other []Series) {
	if s.Metrics == nil {
		return nil, nil
	}
	byName := map[string]*Series{}
	for _, p := range s.Metrics.Points {
		if p.Error != "" {
			continue
		}
		for name, v := range p.Values {
			sr := byName[name]
			if sr == nil {
				sr = &Series{Name: name}
				byName[name] = sr
			}
			y := v
			if isBytes(name) {
				y = v / (1 << 20)
			}
			sr.Points = append(sr.Points, Point{X: ax.at(p.Time), Y: y})
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	var inBytes []string
	for _, n := range names {
		sr := *byName[n]
		sr.Dashed = true // the target's own view, beside the sampler's solid lines
		if isBytes(n) {
			bytes, inBytes = append(bytes, sr), append(inBytes, n)
		} else {
			other = append(other, sr)
		}
	}
	for i, l := range shortNames(inBytes) {
		bytes[i].Name = l
	}
	return bytes[:min(len(bytes), maxMetricSeries)], other[:min(len(other), maxMetricSeries+2)]
}

// shortNames are the legend labels of metric series: without the unit
// suffix (_bytes: the axis says MiB) and the namespace (nodejs_, process_)
// when the rest still has two words, so six fit a small panel; the full
// names when two would read the same. The sample's text names them in full.
func shortNames(names []string) []string {
	out := make([]string, len(names))
	seen := map[string]bool{}
	for i, n := range names {
		base, labels, _ := strings.Cut(n, "{")
		base = strings.TrimSuffix(base, "_bytes")
		if ns, rest, ok := strings.Cut(base, "_"); ok && ns != "" && strings.Contains(rest, "_") {
			base = rest
		}
		if labels != "" {
			base += "{" + labels
		}
		if seen[base] {
			return names
		}
		seen[base] = true
		out[i] = base
	}
	return out
}

// firstBytesSeries is the first series in bytes the sample's suite asked
// for ("" when none): the one its repeats are overlaid by.
func firstBytesSeries(s *result.Sample) string {
	if s.Metrics == nil {
		return ""
	}
	for _, n := range s.Metrics.Series {
		if isBytes(n) {
			return n
		}
	}
	return ""
}

// metricNamed is one series of s's metrics in MiB on its time axis.
func metricNamed(s *result.Sample, ax timeAxis, name string) Series {
	sr := Series{Name: name}
	if s.Metrics == nil {
		return sr
	}
	for _, p := range s.Metrics.Points {
		if v, ok := p.Values[name]; ok && p.Error == "" {
			sr.Points = append(sr.Points, Point{X: ax.at(p.Time), Y: v / (1 << 20)})
		}
	}
	return sr
}

// isBytes says whether a series is in bytes, by the Prometheus naming
// convention (a _bytes suffix, before any labels).
func isBytes(name string) bool {
	base, _, _ := strings.Cut(name, "{")
	return strings.HasSuffix(base, "_bytes")
}

// metricsSummary is one sample's line about its metrics scrapes: how many,
// what they cost, and the median of each series in the load phase.
func metricsSummary(s *result.Sample) string {
	m := s.Metrics
	if m == nil {
		return ""
	}
	c := m.Cost
	line := fmt.Sprintf("Target metrics %s: %d scrapes every %gs and at each phase edge (%d during the load, %d failed), on a connection of their own; %s of client wall time and %s in all.",
		m.URL, c.Scrapes, m.EverySeconds, c.InLoad, c.Failed, result.FormatUS(int64(c.WallSeconds*1e6)), sizeText(c.Bytes))
	var load []string
	for _, name := range loadMedians(m) {
		load = append(load, name)
	}
	if len(load) > 0 {
		line += " Load medians: " + strings.Join(load, ", ") + "."
	}
	return line
}

// loadMedians are "name value" of each series over the load phase's
// scrapes, sorted by name; bytes in MiB.
func loadMedians(m *result.Metrics) []string {
	vals := map[string][]float64{}
	for _, p := range m.Points {
		if p.Phase != "load" || p.Error != "" {
			continue
		}
		for k, v := range p.Values {
			vals[k] = append(vals[k], v)
		}
	}
	names := make([]string, 0, len(vals))
	for k := range vals {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for _, k := range names {
		v := medianOf(vals[k])
		if isBytes(k) {
			out = append(out, fmt.Sprintf("%s %s MiB", k, figureTo(v/(1<<20), 1)))
		} else {
			out = append(out, fmt.Sprintf("%s %s", k, trimFloat(v)))
		}
	}
	return out
}

// sizeText is a byte count for a reader ("2.3 KiB").
func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// metricsNotes warn of the samples whose metrics scrapes went wrong: the
// first sample's notes, and how many samples had any.
func metricsNotes(rows []Row) []string {
	var first []string
	n := 0
	for _, r := range rows {
		if m := r.Sample.Metrics; m != nil && len(m.Notes) > 0 {
			if n == 0 {
				first = m.Notes
			}
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]string, 0, len(first))
	for _, note := range first {
		out = append(out, fmt.Sprintf("Target metrics (%d of %d samples): %s", n, len(rows), note))
	}
	return out
}
