package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/benchrig/benchrig/internal/result"
)

// overTimeSection is every sample over time: per case the repeats of each
// variant overlaid, then each sample's own charts (the first of the case
// open), with the table of its phases for the formats that cannot draw.
func overTimeSection(g *grid) Section {
	sec := Section{Title: "Over time", Text: []string{
		"Under each case, first its variants' repeats overlaid (one line per repeat), then each sample on its own. " +
			"The time axis is seconds since the sample's first resource sample. Shaded bands are its phases " +
			"(baseline, warmup, settle, load, recovery), named above the chart, by their first letters when narrow. " +
			"Errors per second are drawn for samples that had errors. Memory and CPU are the target's whole process tree, read every sampler interval; requests, p50, p99 and errors are per whole second of the load window.",
	}}
	for _, c := range g.cases {
		grp := Group{Title: c}
		several := 0
		for _, v := range g.variants {
			if len(g.at(c, v)) > 0 {
				several++
			}
		}
		for _, v := range g.variants {
			ss := g.at(c, v)
			if len(ss) < 2 {
				continue
			}
			for _, ch := range overlayPanels(ss) {
				if several > 1 {
					ch.Title = ch.Title + " · " + v
				}
				grp.Charts = append(grp.Charts, ch)
			}
		}
		for _, v := range g.variants {
			for i, s := range g.at(c, v) {
				dt := Detail{
					Summary: sampleSummary(v, s, i),
					Open:    len(grp.Details) == 0,
					Charts:  samplePanels(s),
					Tables:  []Table{phaseTable(s, v, i)},
				}
				if line := metricsSummary(s); line != "" {
					dt.Text = append(dt.Text, line)
				}
				grp.Details = append(grp.Details, dt)
			}
		}
		sec.Groups = append(sec.Groups, grp)
	}
	return sec
}

// sampleSummary is the line a sample is folded under: variant, repeat,
// headline figures and verdict.
func sampleSummary(v string, s *result.Sample, i int) string {
	parts := []string{v, fmt.Sprintf("repeat %d", repeatOf(s, i))}
	if s.Load != nil && s.Error == "" {
		parts = append(parts, figure(s.Load.RequestsPerSec)+" req/s")
		if s.Load.Latency.Count > 0 {
			parts = append(parts, "p99 "+result.FormatUS(s.Load.Latency.P(99)))
		}
	}
	parts = append(parts, verdictWord(s))
	return strings.Join(parts, " · ")
}

// verdictWord is HEALTHY, UNHEALTHY or FAILED.
func verdictWord(s *result.Sample) string {
	switch {
	case s.Error != "":
		return "FAILED"
	case !s.Verdict.Healthy:
		return "UNHEALTHY"
	}
	return "HEALTHY"
}

// phaseTable is one sample's phases: when each ran, the server's median
// RSS and its CPU in cores during it, and the load window's requests/s and
// errors.
func phaseTable(s *result.Sample, v string, i int) Table {
	t := Table{Caption: fmt.Sprintf("Phases of %s, repeat %d", v, repeatOf(s, i)),
		Header: []string{"Phase", "From (s)", "To (s)", "RSS median (MiB)", "Server cores", "Requests/s", "Errors"}}
	ax := newTimeAxis(s)
	for _, p := range s.Phases {
		from, to := ax.at(p.Start), ax.at(p.End)
		if to-from < 0.05 {
			continue
		}
		var rss []float64
		var first, last *result.ResourceSample
		if s.Server != nil {
			for k := range s.Server.Samples {
				r := &s.Server.Samples[k]
				if r.Phase != p.Name {
					continue
				}
				rss = append(rss, float64(r.RSS)/(1<<20))
				if first == nil {
					first = r
				}
				last = r
			}
		}
		row := []string{p.Name, figureTo(from, 1), figureTo(to, 1), noFigure, noFigure, "", ""}
		if len(rss) > 0 {
			row[3] = figureTo(medianOf(rss), 1)
		}
		if first != nil && last != nil && last.Offset-first.Offset > 0.05 {
			row[4] = figureTo((last.CPU()-first.CPU())/(last.Offset-first.Offset), 2)
		}
		if p.Name == "load" && s.Load != nil {
			row[5] = figure(s.Load.RequestsPerSec)
			row[6] = count(s.Load.Errors + s.Load.Timeouts + s.Load.Unexpected)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// medianOf is the median of unsorted values.
func medianOf(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return median(s)
}
