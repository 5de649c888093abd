package report

import (
	"fmt"
	"math"
	"time"

	"github.com/benchrig/benchrig/internal/result"
)

// timeAxis places the moments of one sample on the X axis its charts
// share: seconds since the sample's first resource sample (the origin of
// ResourceSample.Offset and ClientCPUSample.Offset), or since its first
// phase when the server was not sampled.
type timeAxis struct {
	origin   time.Time
	min, max float64
}

// newTimeAxis is the time axis of s, spanning its phases, its resource
// samples and its load window.
func newTimeAxis(s *result.Sample) timeAxis {
	var ax timeAxis
	switch {
	case s.Server != nil && len(s.Server.Samples) > 0:
		r := s.Server.Samples[0]
		ax.origin = r.Time.Add(-time.Duration(r.Offset * float64(time.Second)))
	case len(s.Phases) > 0:
		ax.origin = s.Phases[0].Start
	case s.Load != nil:
		ax.origin = s.Load.Start
	default:
		ax.origin = s.Started
	}
	for _, p := range s.Phases {
		ax.max = math.Max(ax.max, ax.at(p.End))
	}
	if s.Server != nil {
		for _, r := range s.Server.Samples {
			ax.max = math.Max(ax.max, r.Offset)
		}
	}
	if s.Load != nil {
		ax.max = math.Max(ax.max, ax.at(s.Load.End))
	}
	return ax
}

// at is t on the axis.
func (ax timeAxis) at(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return t.Sub(ax.origin).Seconds()
}

// phaseBands are the phases of s as bands of its time axis; instants
// (the pre- and post-checks) are left out.
func phaseBands(s *result.Sample, ax timeAxis) []Band {
	var out []Band
	for _, p := range s.Phases {
		from, to := ax.at(p.Start), ax.at(p.End)
		if to-from >= 0.05 {
			out = append(out, Band{Name: p.Name, From: from, To: to})
		}
	}
	return out
}

// panel is an over-time chart of one sample's axis.
func panel(title, unit string, ax timeAxis, bands []Band, series ...Series) Chart {
	return Chart{Kind: Lines, Title: title, Unit: unit, XUnit: "seconds", XMin: 0, XMax: math.Max(ax.max, 1),
		Bands: bands, OverTime: true, Series: series}
}

// memorySeries are the server's RSS and, where read, PSS in MiB.
func memorySeries(s *result.Sample) (rss, pss Series) {
	rss, pss = Series{Name: "RSS"}, Series{Name: "PSS"}
	if s.Server == nil {
		return rss, pss
	}
	for _, r := range s.Server.Samples {
		rss.Points = append(rss.Points, Point{X: r.Offset, Y: float64(r.RSS) / (1 << 20)})
		if !r.PSSSkipped && !r.PSSUnavailable && r.PSS > 0 {
			pss.Points = append(pss.Points, Point{X: r.Offset, Y: float64(r.PSS) / (1 << 20)})
		}
	}
	return rss, pss
}

// rateSeries turns cumulative readings into a rate: the growth between
// two readings over the seconds between them, at the later one.
// Readings closer together than half the usual interval (the extra ones
// at phase edges) are merged with the next: CPU time grows in ticks of
// 10 ms, so 5 ms apart they would show a burst of cores that never was.
func rateSeries(name string, xs, cum []float64) Series {
	sr := Series{Name: name}
	if len(xs) < 2 {
		return sr
	}
	var gaps []float64
	for i := 1; i < len(xs); i++ {
		gaps = append(gaps, xs[i]-xs[i-1])
	}
	minGap := math.Max(0.05, medianOf(gaps)/2)
	last := 0
	for i := 1; i < len(xs); i++ {
		if dt := xs[i] - xs[last]; dt >= minGap {
			sr.Points = append(sr.Points, Point{X: xs[i], Y: math.Max(0, (cum[i]-cum[last])/dt)})
			last = i
		}
	}
	return sr
}

// serverCPUSeries is the server's CPU in cores between resource samples.
func serverCPUSeries(s *result.Sample) Series {
	if s.Server == nil {
		return Series{Name: "server"}
	}
	var xs, cum []float64
	for _, r := range s.Server.Samples {
		xs, cum = append(xs, r.Offset), append(cum, r.CPU())
	}
	return rateSeries("server", xs, cum)
}

// clientCPUSeries is benchrig's own CPU in cores between its readings.
func clientCPUSeries(s *result.Sample) Series {
	var xs, cum []float64
	for _, c := range s.ClientCPU {
		xs, cum = append(xs, c.Offset), append(cum, c.UserSeconds+c.SystemSeconds)
	}
	return rateSeries("client", xs, cum)
}

// perSecond is one figure of each whole second of the load window, at the
// middle of its second.
func perSecond(name string, s *result.Sample, ax timeAxis, f func(result.Second) (float64, bool)) Series {
	sr := Series{Name: name}
	if s.Load == nil {
		return sr
	}
	start := ax.at(s.Load.Start)
	for _, sec := range completeSeconds(s.Load) {
		if v, ok := f(sec); ok {
			sr.Points = append(sr.Points, Point{X: start + float64(sec.T) + 0.5, Y: v})
		}
	}
	return sr
}

func secRequests(x result.Second) (float64, bool) { return float64(x.Requests), true }
func secErrors(x result.Second) (float64, bool)   { return float64(x.Errors), true }
func secP50(x result.Second) (float64, bool)      { return float64(x.P50US) / 1000, x.Requests > 0 }
func secP99(x result.Second) (float64, bool)      { return float64(x.P99US) / 1000, x.Requests > 0 }

// samplePanels are the over-time charts of one sample on its time axis:
// server memory (RSS, PSS and the target's own metrics in bytes, dashed),
// the target's other metrics, server CPU, client CPU (when recorded), requests, p50
// and p99, and errors per second. Panels without a point are left out.
func samplePanels(s *result.Sample) []Chart {
	ax := newTimeAxis(s)
	bands := phaseBands(s, ax)
	rss, pss := memorySeries(s)
	var out []Chart
	add := func(c Chart) {
		if chartHasData(c) {
			out = append(out, c)
		}
	}
	mem := panel("Server memory", "MiB", ax, bands, rss)
	if len(pss.Points) > 0 {
		mem.Series = append(mem.Series, pss)
	}
	inBytes, other := metricSeries(s, ax)
	mem.Series = append(mem.Series, inBytes...)
	cpu := panel("Server CPU", "cores", ax, bands, serverCPUSeries(s))
	withCompanions(s, ax, &mem, &cpu)
	groupCores, throttled, groupMem := cgroupSeries(s, ax)
	if len(groupMem.Points) > 0 {
		mem.Series = append(mem.Series, groupMem)
	}
	add(mem)
	add(panel("Target metrics", "value", ax, bands, other...))
	add(cpu)
	add(panel("Under limits: the group's CPU and the time its CPU limit held it back", "cores", ax, bands, groupCores, throttled))
	add(panel("Client CPU (benchrig)", "cores", ax, bands, clientCPUSeries(s)))
	add(panel("Requests per second", "req/s", ax, bands, perSecond("requests", s, ax, secRequests)))
	p50 := perSecond("p50", s, ax, secP50)
	p50.Dashed = true
	add(panel("Latency per second", "ms", ax, bands, perSecond("p99", s, ax, secP99), p50))
	if s.Load != nil && s.Load.Errors+s.Load.Timeouts+s.Load.Unexpected > 0 {
		add(panel("Errors per second", "errors/s", ax, bands, perSecond("errors", s, ax, secErrors)))
	}
	return out
}

// overlayPanels are the charts of one case and variant with its repeats
// overlaid, each repeat a line, on the axis of the longest, shaded with
// the phases of the first: server memory, server CPU, requests and p99
// per second, and the first target metric in bytes the suite names.
func overlayPanels(ss []*result.Sample) []Chart {
	if len(ss) == 0 {
		return nil
	}
	ax := newTimeAxis(ss[0])
	bands := phaseBands(ss[0], ax)
	type fig struct {
		title, unit string
		series      func(s *result.Sample, ax timeAxis) Series
	}
	figs := []fig{
		{"Server RSS", "MiB", func(s *result.Sample, _ timeAxis) Series { r, _ := memorySeries(s); return r }},
		{"Server CPU", "cores", func(s *result.Sample, _ timeAxis) Series { return serverCPUSeries(s) }},
		{"Requests per second", "req/s", func(s *result.Sample, ax timeAxis) Series { return perSecond("", s, ax, secRequests) }},
		{"p99 per second", "ms", func(s *result.Sample, ax timeAxis) Series { return perSecond("", s, ax, secP99) }},
	}
	if name := firstBytesSeries(ss[0]); name != "" {
		// the target's own memory figure (a JS heap) across repeats
		figs = append(figs, fig{"Metric " + shortNames([]string{name})[0], "MiB", func(s *result.Sample, ax timeAxis) Series {
			return metricNamed(s, ax, name)
		}})
	}
	var out []Chart
	for _, f := range figs {
		c := panel(f.title, f.unit, ax, bands)
		for i, s := range ss {
			sax := newTimeAxis(s)
			c.XMax = math.Max(c.XMax, sax.max)
			sr := f.series(s, sax)
			sr.Name = fmt.Sprintf("repeat %d", repeatOf(s, i))
			c.Series = append(c.Series, sr)
		}
		if chartHasData(c) {
			out = append(out, c)
		}
	}
	return out
}

// repeatOf is a sample's repeat number, or its position (1-based) when
// the file does not record it.
func repeatOf(s *result.Sample, i int) int {
	if s.Repeat > 0 {
		return s.Repeat
	}
	return i + 1
}
