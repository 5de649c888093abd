package report

import (
	"fmt"
	"math"

	"github.com/benchrig/benchrig/internal/result"
)

// latencyQuantiles are the points of a latency-by-percentile chart.
var latencyQuantiles = []float64{50, 90, 99, 99.9, 99.99}

// latencyCharts are, for each case (up to maxLatencyCharts), the latency
// by percentile of every variant with the repeats' spread; for a case run
// at a constant rate, the service-time chart beside the corrected one.
func (g *grid) latencyCharts() []Chart {
	var out []Chart
	for i, c := range g.cases {
		if i == maxLatencyCharts {
			break
		}
		rate := false
		for _, v := range g.variants {
			for _, s := range g.at(c, v) {
				rate = rate || loadOK(s) && s.Load.Service != nil && s.Load.Service.Count > 0
			}
		}
		if !rate {
			out = append(out, g.latencyChart(c, "Latency by percentile · "+c, headline))
			continue
		}
		out = append(out, g.latencyChart(c, "Corrected latency (from due time) · "+c, headline),
			g.latencyChart(c, "Service time (from send) · "+c, service))
	}
	return out
}

// headline and service pick a sample's headline latency and, at a
// constant rate, its service time.
func headline(s *result.Sample) *result.Latency { return &s.Load.Latency }
func service(s *result.Sample) *result.Latency  { return s.Load.Service }

// latencyChart draws, for one case, each variant's latency percentiles
// (median across repeats, the band from min to max) against 1/(1-q) on a
// log axis.
func (g *grid) latencyChart(c, title string, pick func(*result.Sample) *result.Latency) Chart {
	ch := Chart{Kind: Lines, Title: title, Unit: "ms", LogX: true, XLabels: map[float64]string{}}
	for _, q := range latencyQuantiles {
		ch.XLabels[percentileX(q)] = fmt.Sprintf("%g %%", q)
	}
	for _, v := range g.variants {
		ss := g.at(c, v)
		if len(ss) == 0 {
			continue
		}
		sr := Series{Name: v}
		for _, q := range latencyQuantiles {
			m := metric{get: func(s *result.Sample) (float64, bool) {
				if !loadOK(s) {
					return 0, false
				}
				l := pick(s)
				if l == nil || l.Count == 0 {
					return 0, false
				}
				us := l.P(q)
				return float64(us) / 1000, us >= 0
			}}
			p := m.point(ss)
			p.X = percentileX(q)
			sr.Points = append(sr.Points, p)
		}
		ch.Series = append(ch.Series, sr)
	}
	// Tail latencies often span decades: a log axis keeps p50 readable.
	lo, hi := math.Inf(1), 0.0
	for _, sr := range ch.Series {
		for _, p := range sr.Points {
			if !p.Missing && p.Y > 0 {
				lo, hi = math.Min(lo, p.Y), math.Max(hi, p.Y)
			}
		}
	}
	ch.LogY = hi >= 10*lo
	return ch
}

// scaledBars is a Bars chart of m on a log axis when its bars span
// magnitudes a linear one would hide (400 beside 52,000), said in its
// title.
func (g *grid) scaledBars(m metric, title string) Chart {
	c := g.bars(m, title)
	if mixedMagnitudes(c) {
		c.LogY = true
		c.Title += " · log scale (bars span more than 20×)"
	}
	return c
}

// percentileX is the chart position of percentile q: 1 ÷ (1 − q/100), so
// that 90, 99 and 99.9 % are evenly spaced on a log axis.
func percentileX(q float64) float64 {
	x := 1 / (1 - q/100)
	// 1/(1-0.999) is 999.9999…: round to the intended decade.
	return float64(int64(x*1000+0.5)) / 1000
}
