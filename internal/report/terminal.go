package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/benchrig/benchrig/internal/result"
)

// TerminalOptions are the parts of a terminal report that are not in the
// sample.
type TerminalOptions struct {
	// Title is the first line ("http://127.0.0.1:8080/ · 10 connections · 5s").
	Title string
	// ShowVerdict prints HEALTHY/UNHEALTHY (always in rate mode).
	ShowVerdict bool
	// Floor, if set, is benchrig's own floor, printed beside the figures.
	Floor *result.Floor
}

// Terminal writes the report of one sample for a terminal: the latency
// table, the per-second Req/Sec and Bytes/Sec table, totals, errors by
// message, open-loop figures, the server table and the client's own CPU.
func Terminal(w io.Writer, s *result.Sample, o TerminalOptions) error {
	p := &printer{w: w}
	if o.Title != "" {
		p.f("%s\n\n", o.Title)
	}
	if s.Error != "" {
		p.f("FAILED: %s\n", s.Error)
	}
	if l := s.Load; l != nil {
		latencyTable(p, l)
		perSecondTable(p, l)
		totals(p, l)
		if l.Rate != nil {
			rateFigures(p, l, timerSlack(s))
		}
		if len(l.Ops) > 1 {
			opsTable(p, l)
		}
		if s.Server != nil {
			serverTable(p, s.Server, l)
		}
		companionTables(p, s, l)
		client(p, l)
		if line := FloorLine(o.Floor); line != "" {
			p.f("%s\n", line)
		}
	} else if s.Server != nil {
		serverTable(p, s.Server, nil)
	}
	if len(s.Stats) > 0 {
		keys := make([]string, 0, len(s.Stats))
		for k := range s.Stats {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		p.f("\nTarget statistics over the load window:\n")
		for _, k := range keys {
			p.f("  %-28s %s\n", k, trimFloat(s.Stats[k]))
		}
	}
	if line := metricsSummary(s); line != "" {
		p.f("\n%s\n", line)
		for _, n := range s.Metrics.Notes {
			p.f("! %s\n", n)
		}
	}
	if s.Target != nil && s.Target.ExitStatus != "" {
		p.f("\nTarget %q exited during the sample: %s\n", s.Target.Name, s.Target.ExitStatus)
		if s.Target.LogTail != "" {
			p.f("Last lines of %s:\n%s\n", s.Target.LogPath, indent(s.Target.LogTail))
		}
	}
	if o.ShowVerdict || (s.Load != nil && s.Load.Rate != nil) {
		verdict(p, s.Verdict)
	}
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) table(t *table) {
	if p.err == nil {
		p.err = t.render(p.w)
	}
}

func latencyRow(name string, l result.Latency) []string {
	row := []string{name}
	for _, q := range []float64{2.5, 50, 97.5, 99, 99.9} {
		row = append(row, ms(float64(l.P(q))))
	}
	return append(row, ms(l.MeanUS), ms(l.StdevUS), ms(float64(l.MaxUS)))
}

func latencyTable(p *printer, l *result.Load) {
	t := &table{}
	t.add("Stat", "2.5%", "50%", "97.5%", "99%", "99.9%", "Avg", "Stdev", "Max")
	if l.Service != nil {
		t.add(latencyRow("Latency (from due time)", l.Latency)...)
		t.add(latencyRow("Service time (from send)", *l.Service)...)
		t.add(latencyRow("Schedule lag", l.Rate.Lag)...)
	} else {
		t.add(latencyRow("Latency", l.Latency)...)
	}
	p.table(t)
}

// completeSeconds returns the timeline's whole seconds: a final partial
// second would understate the rate. A window shorter than a second keeps
// what it has.
func completeSeconds(l *result.Load) []result.Second {
	// a window planned as 5 s may end a hair before or after: 10 ms of
	// slack decides whether the last second is whole.
	whole := int(math.Floor(l.Seconds + 0.01))
	var out []result.Second
	for _, s := range l.Timeline {
		if s.T < whole {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return l.Timeline
	}
	return out
}

func perSecondTable(p *printer, l *result.Load) {
	secs := completeSeconds(l)
	reqs := make([]float64, len(secs))
	byts := make([]float64, len(secs))
	for i, s := range secs {
		reqs[i], byts[i] = float64(s.Requests), float64(s.Bytes)
	}
	r, b := summarise(reqs), summarise(byts)
	t := &table{}
	t.add("Stat", "1%", "2.5%", "50%", "97.5%", "Avg", "Stdev", "Min")
	num := func(v float64) string { return count(int64(math.Round(v))) }
	t.add("Req/Sec", num(r.p1), num(r.p2_5), num(r.p50), num(r.p97_5), trimFloat(r.mean), trimFloat(r.stdev), num(r.min))
	t.add("Bytes/Sec", bytesSI(b.p1), bytesSI(b.p2_5), bytesSI(b.p50), bytesSI(b.p97_5), bytesSI(b.mean), bytesSI(b.stdev), bytesSI(b.min))
	p.table(t)
	p.f("Req/Bytes counted once per second over %d whole second(s).\n\n", len(secs))
}

// readsOK is the reads of the window completed OK: the "read" operations
// when it has them, else all its requests.
func readsOK(l *result.Load) int64 {
	for _, o := range l.Ops {
		if o.Name == "read" {
			return o.Requests
		}
	}
	return l.Requests
}

// missPercent renders a miss ratio as a percentage.
func missPercent(r float64) string {
	if p := r * 100; p < 0.1 {
		return fmt.Sprintf("%.3g %%", p)
	}
	return fmt.Sprintf("%.1f %%", r*100)
}

func totals(p *printer, l *result.Load) {
	p.f("%s requests in %.2fs, %s read: %s req/s\n", count(l.Requests), l.Seconds, bytesSI(float64(l.Bytes)), trimFloat(l.RequestsPerSec))
	p.f("%s errors, %s timeouts, %s unexpected responses", count(l.Errors), count(l.Timeouts), count(l.Unexpected))
	if l.Misses > 0 {
		p.f(", %s misses", count(l.Misses))
	}
	if l.Reconnects > 0 {
		p.f(", %s reconnects", count(l.Reconnects))
	}
	if l.Interrupted {
		p.f(" (interrupted)")
	}
	p.f("\n")
	if l.Misses > 0 {
		p.f("%s of %s reads (%s) were answered without a value for a key (nil, or no row): misses, not requests. Is the key space filled? (benchrig resp: --fill)\n",
			count(l.Misses), count(l.Misses+readsOK(l)), missPercent(l.MissRatio()))
	}
	if l.OutstandingAtEnd > 0 {
		p.f("%s requests outstanding at the window's end, the oldest for %s (neither completed nor failed; the window did not wait for them)\n",
			count(l.OutstandingAtEnd), result.FormatUS(l.OutstandingOldestUS))
	}
	if len(l.ReconnectCauses) > 0 {
		causes := make([]string, 0, len(l.ReconnectCauses))
		for k := range l.ReconnectCauses {
			causes = append(causes, k)
		}
		sort.Strings(causes)
		for i, k := range causes {
			causes[i] = fmt.Sprintf("%s × %s", count(l.ReconnectCauses[k]), k)
		}
		p.f("Reconnects (not errors): %s", strings.Join(causes, ", "))
		if l.Resent > 0 {
			p.f("; %s requests re-sent once on the new connection", count(l.Resent))
		}
		p.f("\n")
	}
	if len(l.Messages) > 0 {
		type kv struct {
			k string
			v int64
		}
		var ms []kv
		for k, v := range l.Messages {
			ms = append(ms, kv{k, v})
		}
		sort.Slice(ms, func(i, j int) bool { return ms[i].v > ms[j].v || ms[i].v == ms[j].v && ms[i].k < ms[j].k })
		for i, m := range ms {
			if i == 10 {
				p.f("  … and %d more kinds\n", len(ms)-10)
				break
			}
			p.f("  %10s × %s\n", count(m.v), m.k)
		}
	}
}

// timerSlack is the timer slack a sample's rate ran with, in µs (0:
// none, or no config recorded).
func timerSlack(s *result.Sample) int64 {
	if s.Config == nil {
		return 0
	}
	return s.Config.Engine.TimerSlackUS
}

func rateFigures(p *printer, l *result.Load, slackUS int64) {
	r := l.Rate
	p.f("\nTarget rate %s req/s (%s arrivals): achieved %s req/s, coverage %.1f %%\n",
		trimFloat(r.Target), r.Arrival, trimFloat(r.Achieved), r.Coverage)
	p.f("%s scheduled, %s late (no free connection or stream when due), %s dropped (backlog of %s full)\n",
		count(r.Scheduled), count(r.Late), count(r.Dropped), count(int64(r.MaxBacklog)))
	p.f("Schedule lag p50 %s, p99 %s, max %s", result.FormatUS(r.Lag.P(50)), result.FormatUS(r.Lag.P(99)), result.FormatUS(r.Lag.MaxUS))
	if slackUS > 0 {
		p.f(" (timer slack %s: sends wait up to that long to leave together)", result.FormatUS(slackUS))
	}
	p.f("\n")
}

func opsTable(p *printer, l *result.Load) {
	t := &table{}
	t.add("Operation", "Requests", "Errors", "p50", "p99", "Max")
	for _, o := range l.Ops {
		t.add(o.Name, count(o.Requests), count(o.Errors+o.Timeouts+o.Unexpected),
			ms(float64(o.Latency.P(50))), ms(float64(o.Latency.P(99))), ms(float64(o.Latency.MaxUS)))
	}
	p.f("\n")
	p.table(t)
}

func serverTable(p *printer, s *result.Server, l *result.Load) {
	f := s.Figures
	p.f("\nServer (whole process tree, %d samples):\n", len(s.Samples))
	t := &table{}
	t.add("", "Cores", "% of machine", "µs/request", "Baseline", "Load", "After", "Peak")
	t.add("RSS", fmt.Sprintf("%.2f", f.Cores), fmt.Sprintf("%.1f %%", f.MachinePercent), fmt.Sprintf("%.1f", f.MicrosPerRequest),
		mib(f.RSSBaseline), mib(f.RSSLoad), mib(f.RSSAfter), mib(f.RSSPeak))
	if f.PSSPeak > 0 && f.PSSPeak != f.RSSPeak {
		t.add("PSS", "", "", "", mib(f.PSSBaseline), mib(f.PSSLoad), mib(f.PSSAfter), mib(f.PSSPeak))
	}
	p.table(t)
	p.f("Server CPU %.2f s over a %.2f s load window; up to %d processes, %d threads.\n",
		f.CPUSeconds, f.WindowSeconds, f.MaxProcesses, f.MaxThreads)
	if len(f.Missing) > 0 {
		p.f("Not computed (no samples for them): %s.\n", strings.Join(f.Missing, ", "))
	}
	if pl := s.Placement; pl != nil && (pl.ClientCPUs != "" || pl.TargetCPUs != "" || pl.ServerCPUs != "") {
		server := orAll(pl.TargetCPUs)
		if pl.TargetCPUs == "" && pl.ServerCPUs != "" {
			server = pl.ServerCPUs + " (found pinned)"
		}
		p.f("Placement: client on CPUs %s, server on CPUs %s.\n", orAll(pl.ClientCPUs), server)
	}
	terminalLimits(p, s)
}

func orAll(s string) string {
	if s == "" {
		return "(all)"
	}
	return s
}

func client(p *printer, l *result.Load) {
	c := l.Client
	on := ""
	if c.IO == "io_uring" {
		on = ", on io_uring"
		if c.CoalesceUS > 0 {
			on += fmt.Sprintf(" (waits coalesced, up to %g µs)", c.CoalesceUS)
		}
	}
	p.f("\nClient: %.2f cores of %d usable (user %.2f s, system %.2f s), %.1f µs CPU per request, %s requests per CPU-second%s\n",
		c.Cores, c.UsableCores, c.UserSeconds, c.SystemSeconds, c.CPUPerRequestUS, count(int64(c.RequestsPerCPUSecond)), on)
	if c.BusyPollUS > 0 {
		p.f("Busy poll: up to %g µs of polling for answers before each sleep, %.2f s of that CPU (left out of the saturation check)\n", c.BusyPollUS, c.BusyPollSeconds)
	}
	if c.Saturated {
		p.f("WARNING: the client was saturated (%.2f of %d usable cores): these figures measure benchrig, not the server.\n"+
			"         Give the client more cores (--client-cpus), or fewer connections / a lower rate.\n", c.Cores, c.UsableCores)
	}
}

func verdict(p *printer, v result.Verdict) {
	if v.Healthy {
		p.f("\nHEALTHY\n")
		return
	}
	p.f("\nUNHEALTHY\n")
	for _, r := range v.Reasons {
		p.f("  - %s\n", r)
	}
}

func trimFloat(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return count(int64(v))
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = "  | " + lines[i]
	}
	return strings.Join(lines, "\n")
}
