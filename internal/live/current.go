package live

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/report"
)

// lastSeconds is how many of the latest seconds the table under the
// charts lists.
const lastSeconds = 10

// currentHTML is the sample in flight: its name, its phase and time, the
// report's over-time panels of its seconds so far on the axis of its
// planned phases (shaded as in the report), and its last seconds as a
// table.
func currentHTML(sn snapshot) string {
	if sn.current == "" {
		return `<p class="none">No sample in flight.</p>`
	}
	var b strings.Builder
	elapsed := sn.now.Sub(sn.currentStart)
	if n := len(sn.points); n > 0 {
		elapsed = sn.points[n-1].Offset
	}
	var planned time.Duration
	for _, p := range sn.phases {
		planned += p.Duration
	}
	fmt.Fprintf(&b, `<h3 id="inflight">%s</h3>`, html.EscapeString(label(sn, sn.current)))
	line := "phase " + currentPhase(sn) + " · "
	if currentPhase(sn) == "" {
		line = ""
	}
	line += span(elapsed)
	if planned > 0 {
		line += " of " + span(planned) + " planned"
	}
	fmt.Fprintf(&b, `<p class="phase">%s</p>`, html.EscapeString(line))
	b.WriteString(fragment(report.ChartsHTML(panels(sn, planned))))
	if len(sn.points) > 0 {
		b.WriteString(fragment(report.TableHTML(secondsTable(sn.points))))
	}
	return b.String()
}

// panels are the report's over-time charts of the seconds so far:
// requests, latency (p99, p50 dashed), errors and misses when there are
// any, the server's CPU and memory and benchrig's CPU when read.
func panels(sn snapshot, planned time.Duration) []report.Chart {
	xmax := planned.Seconds()
	if n := len(sn.points); n > 0 {
		xmax = math.Max(xmax, sn.points[n-1].Offset.Seconds())
	}
	var bands []report.Band
	at := 0.0
	for _, p := range sn.phases {
		bands = append(bands, report.Band{Name: p.Name, From: at, To: at + p.Duration.Seconds()})
		at += p.Duration.Seconds()
	}
	panel := func(title, unit string, series ...report.Series) report.Chart {
		return report.Chart{Kind: report.Lines, Title: title, Unit: unit, XUnit: "seconds", XMin: 0, XMax: math.Max(xmax, 1),
			Bands: bands, OverTime: true, Series: series}
	}
	// per-second figures at the middle of their second, as the report
	// draws them; readings of cumulative CPU and of memory at their time
	mid := func(p Point) float64 { return math.Max(0, p.Offset.Seconds()-0.5) }
	req, p99, p50 := report.Series{Name: "requests"}, report.Series{Name: "p99"}, report.Series{Name: "p50", Dashed: true}
	errs, misses := report.Series{Name: "errors"}, report.Series{Name: "misses"}
	rss, pss := report.Series{Name: "RSS"}, report.Series{Name: "PSS"}
	anyErr, anyCPU, anyClient := false, false, false
	for _, p := range sn.points {
		x := mid(p)
		req.Points = append(req.Points, report.Point{X: x, Y: float64(p.Requests)})
		if p.Requests > 0 && p.P99US > 0 {
			p99.Points = append(p99.Points, report.Point{X: x, Y: float64(p.P99US) / 1000})
			p50.Points = append(p50.Points, report.Point{X: x, Y: float64(p.P50US) / 1000})
		}
		errs.Points = append(errs.Points, report.Point{X: x, Y: float64(p.Errors)})
		misses.Points = append(misses.Points, report.Point{X: x, Y: float64(p.Misses)})
		anyErr = anyErr || p.Errors > 0 || p.Misses > 0
		anyCPU = anyCPU || p.ServerCPU > 0
		anyClient = anyClient || p.ClientCPU > 0
		if p.ServerRSS > 0 {
			rss.Points = append(rss.Points, report.Point{X: p.Offset.Seconds(), Y: float64(p.ServerRSS) / (1 << 20)})
		}
		if p.ServerPSS > 0 {
			pss.Points = append(pss.Points, report.Point{X: p.Offset.Seconds(), Y: float64(p.ServerPSS) / (1 << 20)})
		}
	}
	out := []report.Chart{panel("Requests per second", "req/s", append([]report.Series{req}, agentParts(sn.points, mid)...)...)}
	if len(p99.Points) > 0 { // a feeder without live percentiles gives none
		out = append(out, panel("Latency per second", "ms", p99, p50))
	}
	if anyErr {
		out = append(out, panel("Errors and misses per second", "per second", errs, misses))
	}
	if anyCPU {
		out = append(out, panel("Server CPU", "cores", rate("server", sn.points, func(p Point) float64 { return p.ServerCPU })))
	}
	if len(rss.Points) > 0 {
		mem := panel("Server memory", "MiB", rss)
		if len(pss.Points) > 0 {
			mem.Series = append(mem.Series, pss)
		}
		out = append(out, mem)
	}
	if anyClient {
		out = append(out, panel("Client CPU (benchrig)", "cores", rate("client", sn.points, func(p Point) float64 { return p.ClientCPU })))
	}
	return out
}

// agentParts are a distributed run's per-agent requests per second, one
// series an agent ("agent 0" …), beside the merged load.
func agentParts(pts []Point, mid func(Point) float64) []report.Series {
	var out []report.Series
	at := map[int]int{} // agent → its series
	for _, p := range pts {
		for _, part := range p.Parts {
			i, ok := at[part.Agent]
			if !ok {
				i = len(out)
				at[part.Agent] = i
				out = append(out, report.Series{Name: fmt.Sprintf("agent %d", part.Agent), Dashed: true})
			}
			out[i].Points = append(out[i].Points, report.Point{X: mid(p), Y: float64(part.Requests)})
		}
	}
	return out
}

// rate is a cumulative reading as a rate between consecutive points, at
// the later one (cores, from CPU seconds).
func rate(name string, pts []Point, cum func(Point) float64) report.Series {
	sr := report.Series{Name: name}
	for i := 1; i < len(pts); i++ {
		if dt := (pts[i].Offset - pts[i-1].Offset).Seconds(); dt >= 0.05 {
			sr.Points = append(sr.Points, report.Point{X: pts[i].Offset.Seconds(), Y: math.Max(0, (cum(pts[i])-cum(pts[i-1]))/dt)})
		}
	}
	return sr
}

// secondsTable lists the last seconds, oldest first.
func secondsTable(pts []Point) report.Table {
	t := report.Table{Caption: "Last seconds", Header: []string{"At (s)", "Phase", "Requests", "p50 (ms)", "p99 (ms)", "Errors", "Misses",
		"Server cores", "RSS (MiB)", "Client cores"}, Labels: 2}
	from := max(0, len(pts)-lastSeconds)
	for i := from; i < len(pts); i++ {
		p := pts[i]
		cores := func(cum func(Point) float64) string {
			if i == 0 || cum(p) == 0 {
				return "–"
			}
			dt := (p.Offset - pts[i-1].Offset).Seconds()
			if dt < 0.05 {
				return "–"
			}
			return fmt.Sprintf("%.2f", math.Max(0, (cum(p)-cum(pts[i-1]))/dt))
		}
		lat := func(us int64) string {
			if p.Requests == 0 || us <= 0 {
				return "–"
			}
			return fmt.Sprintf("%.2f", float64(us)/1000)
		}
		rss := "–"
		if p.ServerRSS > 0 {
			rss = fmt.Sprintf("%.1f", float64(p.ServerRSS)/(1<<20))
		}
		t.Rows = append(t.Rows, []string{fmt.Sprintf("%.0f", p.Offset.Seconds()), p.Phase, fmt.Sprint(p.Requests), lat(p.P50US), lat(p.P99US),
			fmt.Sprint(p.Errors), fmt.Sprint(p.Misses), cores(func(p Point) float64 { return p.ServerCPU }),
			rss, cores(func(p Point) float64 { return p.ClientCPU })})
	}
	return t
}
