package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/benchrig/benchrig/internal/result"
)

// maxLatencyCharts bounds the latency-by-percentile charts of a report
// (one per case); further cases are in the tables only.
const maxLatencyCharts = 12

// ReportDoc builds the report of one results file: throughput, latency,
// server and client resources, the open-loop figures when any sample ran at
// a rate, target statistics, provenance and every sample. Figures are
// median [min–max] across repeats, as everywhere in benchrig.
func ReportDoc(src *Source) *Doc {
	g := newGrid(src.Rows)
	d := &Doc{Title: "benchrig report · " + src.Title, Notice: src.Notice, Meta: sourceMeta(src), Notes: append([]string(nil), src.Notes...)}
	d.Notes = append(d.Notes, sampleNotes(src.Rows)...)
	d.Notes = append(d.Notes, noiseNotes(g)...)
	d.Notes = append(d.Notes, aaNotes(g)...)
	d.Notes = append(d.Notes, planNotes(g)...)
	d.Notes = append(d.Notes, metricsNotes(src.Rows)...)

	if sec, ok := capacitySection(src); ok {
		d.Sections = append(d.Sections, sec)
	}
	thr := Section{
		Title:  "Throughput",
		Text:   []string{"Completed requests per second of the load window, median [min–max] across repeats; whiskers show min and max."},
		Charts: []Chart{g.scaledBars(mReqPerSec, "Requests/s")},
	}
	if hasRate(src.Rows) {
		thr.Text = append(thr.Text, "At a constant rate requests/s is the target rate when the server keeps up: coverage, latency and the server's resources below tell the servers apart.")
	}
	d.Sections = append(d.Sections, thr)

	lat := Section{
		Title: "Latency",
		Text: []string{"Latency in milliseconds, median [min–max] across repeats of each percentile. " +
			"At a constant rate it is measured from each request's due time (corrected for coordinated omission); in a closed loop from its send."},
		Charts: []Chart{g.scaledBars(mP99, "p99 latency")},
		Tables: []Table{g.byCell("Latency (ms)", []metric{mP50, mP90, mP99, mP999, mMax})},
	}
	if line := FloorLine(src.Floor); line != "" {
		lat.Text = append(lat.Text, line+".")
	}
	lat.Charts = append(lat.Charts, g.latencyCharts()...)
	if len(g.cases) > maxLatencyCharts {
		lat.Text = append(lat.Text, fmt.Sprintf("Charts by percentile of the first %d cases only; every case is in the table.", maxLatencyCharts))
	}
	d.Sections = append(d.Sections, lat)

	resources := []column{healthy}
	if fc, ok := floorColumn(src.Floor); ok {
		resources = []column{fc, healthy}
	}
	d.Sections = append(d.Sections, Section{
		Title: "Resources",
		Text: []string{"Server: user+system CPU of the target's whole process tree over the load window (cores, and µs per completed request); " +
			"peak memory is PSS where the server has several processes (shared memory counted once), else RSS. " +
			"Client: benchrig's own CPU over the load window; a client above 90 % of its usable cores measures itself, not the server."},
		Charts: []Chart{g.scaledBars(mServerUS, "Server CPU µs per request")},
		Tables: []Table{
			g.byCell("Server and client", []metric{mServerCores, mServerUS, mPeakMiB, mClientCores, mClientUS}, resources...),
			g.memoryTable(),
		},
	})
	addProcesses(&d.Sections[len(d.Sections)-1], g)
	addLimits(&d.Sections[len(d.Sections)-1], g, src.Rows)
	if sec, ok := scalabilitySection(src.Rows); ok {
		d.Sections = append(d.Sections, sec)
	}

	if hasRate(src.Rows) {
		d.Sections = append(d.Sections, Section{
			Title: "Constant rate",
			Text: append([]string{"Coverage = completed ÷ (rate × load seconds) × 100. Late requests found no free connection (or HTTP/2 stream) when due; " +
				"dropped ones were refused by a full backlog. Service time is measured from the actual send."}, slackNote(src.Rows)...),
			Tables: []Table{
				g.byCell("Open loop: memory (MiB), CPU, p99, coverage and healthy runs, as seed 002 shows them", []metric{
					rssMetric("RSS baseline", func(f result.ServerFigures) uint64 { return f.RSSBaseline }),
					rssMetric("RSS load", func(f result.ServerFigures) uint64 { return f.RSSLoad }),
					rssMetric("RSS after", func(f result.ServerFigures) uint64 { return f.RSSAfter }),
					mCPUPercent, mP99, mCoverage}, healthy),
				g.byCell("Open loop: schedule", []metric{serviceP99}, lateDropped),
			},
		})
	}
	d.Sections = append(d.Sections, errorsSection(g, src.Rows), overTimeSection(g))
	if t, ok := g.statsTable(); ok {
		d.Sections = append(d.Sections, Section{Title: "Target statistics",
			Text:   []string{"Deltas over the load window (pg_stat_database, redis INFO), median across repeats."},
			Tables: []Table{t}})
	}
	if t, ok := g.assertionsTable(); ok {
		d.Sections = append(d.Sections, Section{Title: "Assertions",
			Text: []string{"The suite's assertions over each sample's counters and statistics deltas; one that fails makes its sample UNHEALTHY. " +
				"Its requests are those answered, including those outstanding at the window's end and answered within the drain; " +
				"a request sent and never answered may have been counted by the server or not, and where there were some the values say how many of them requests was taken to count."},
			Tables: []Table{t}})
	}
	if t, ok := targetsTable(src.Targets); ok {
		sec := Section{Title: "Targets", Tables: []Table{t}}
		if p, ok := plansTable(src.Targets); ok {
			sec.Tables = append(sec.Tables, p)
		}
		d.Sections = append(d.Sections, sec)
	}
	d.Sections = append(d.Sections, Section{Title: "Samples",
		Text:   []string{"Every sample in the order it ran."},
		Tables: []Table{samplesTable(src.Rows)}})
	return d
}

// sourceMeta are a file's facts for a report's header.
func sourceMeta(src *Source) []KV {
	kv := []KV{{"File", src.Path}, {"Kind", src.Kind}}
	tool := src.Tool.Version
	if src.Tool.Commit != "" {
		tool += " (" + src.Tool.Commit
		if src.Tool.Dirty {
			tool += ", dirty"
		}
		tool += ")"
	}
	if src.Tool.Go != "" {
		tool += " · " + src.Tool.Go
	}
	kv = append(kv, KV{"benchrig", tool})
	if h := src.Host; h != nil {
		kv = append(kv, KV{"Host", fmt.Sprintf("%s · %s · %d CPUs · %d MiB · %s · %s", h.Hostname, h.CPUModel, h.OnlineCPUs, h.MemoryMiB, h.Kernel, h.Distro)})
	}
	kv = append(kv, src.Meta...)
	kv = append(kv, floorKV(src.Floor)...)
	kv = append(kv, KV{"Samples", fmt.Sprint(len(src.Rows))})
	return kv
}

// sampleNotes warns of failed, unhealthy, interrupted and client-saturated
// samples, and says which ran on io_uring.
func sampleNotes(rows []Row) []string {
	var failed, unhealthy, interrupted, saturated, polled, ringed, epolled, coalesced int
	var pollUS, coalesceUS float64 // the longest busy poll, coalesced wait
	var pollShare []float64
	for _, r := range rows {
		s := r.Sample
		switch {
		case s.Error != "":
			failed++
		case !s.Verdict.Healthy:
			unhealthy++
		}
		if s.Load != nil && s.Load.Interrupted {
			interrupted++
		}
		if s.Load != nil && s.Load.Client.Saturated {
			saturated++
		}
		if s.Load != nil {
			switch s.Load.Client.IO {
			case "io_uring":
				ringed++
				if us := s.Load.Client.CoalesceUS; us > 0 {
					coalesced++
					coalesceUS = max(coalesceUS, us)
				}
			case "epoll":
				epolled++
			}
		}
		if s.Load != nil && s.Load.Client.BusyPollUS > 0 {
			c := s.Load.Client
			polled++
			pollUS = max(pollUS, c.BusyPollUS)
			if cpu := c.UserSeconds + c.SystemSeconds; cpu > 0 {
				pollShare = append(pollShare, c.BusyPollSeconds/cpu*100)
			}
		}
	}
	var notes []string
	if failed > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d samples failed before producing figures (see Samples).", failed, len(rows)))
	}
	if unhealthy > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d samples are UNHEALTHY: %s.", unhealthy, len(rows), reasonSummary(rows)))
	}
	if interrupted > 0 {
		notes = append(notes, fmt.Sprintf("%s interrupted: their figures cover what finished.", samplesCount(interrupted, "was", "were")))
	}
	if saturated > 0 {
		notes = append(notes, fmt.Sprintf("In %s the client used over 90 %% of its usable cores: those figures measure benchrig, not the server.", samplesCount(saturated, "", "")))
	}
	if polled > 0 {
		slices.Sort(pollShare)
		share := ""
		if len(pollShare) > 0 {
			share = fmt.Sprintf(" (median %.0f %% of its CPU)", median(pollShare))
		}
		notes = append(notes, fmt.Sprintf("In %s the client polled for answers up to %g µs before it slept (busy poll), so that the server's answers did not have to wake it: "+
			"its client cores and µs/request include that polling%s.", samplesCount(polled, "", ""), pollUS, share))
	}
	if ringed > 0 {
		also := ""
		if epolled > 0 {
			also = fmt.Sprintf("; %s on epoll, whose client figures are not comparable with those", samplesCount(epolled, "ran", "ran"))
		}
		notes = append(notes, fmt.Sprintf("In %s the client's event loops ran on io_uring (client.io; placement.io_uring): one system call a pass "+
			"where epoll takes a wait, a read and a write per connection, so their client cores and µs/request are lower for the same work%s.",
			samplesCount(ringed, "", ""), also))
	}
	if coalesced > 0 {
		notes = append(notes, fmt.Sprintf("In %s a wait on io_uring waited up to %g µs for more answers before it handled the first "+
			"(client.coalesce_us; placement.coalesce: at most 1 %% of the answers' moving-average latency): those answers' latency was taken at most that late.",
			samplesCount(coalesced, "", ""), coalesceUS))
	}
	return notes
}

// reasonSummary lists the distinct reasons unhealthy samples gave, most
// frequent first, with how many samples gave each: "4 errors > 0 (2)";
// reasons are compared whole, the first four shown.
func reasonSummary(rows []Row) string {
	counts := map[string]int64{}
	for _, r := range rows {
		if r.Sample.Error == "" && !r.Sample.Verdict.Healthy {
			for _, why := range r.Sample.Verdict.Reasons {
				counts[why]++
			}
		}
	}
	var parts []string
	for i, mc := range sortedMessages(counts) {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("and %d more (see Samples)", len(counts)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", mc.Message, mc.Count))
	}
	return strings.Join(parts, "; ")
}

// samplesCount is "1 sample" or "n samples", followed by the verb for one
// or several when given.
func samplesCount(n int, one, several string) string {
	s := fmt.Sprintf("%d samples", n)
	verb := several
	if n == 1 {
		s, verb = "1 sample", one
	}
	if verb != "" {
		s += " " + verb
	}
	return s
}

// rssMetric is a memory figure of the server in MiB.
func rssMetric(name string, f func(result.ServerFigures) uint64) metric {
	return metric{name: name, unit: "MiB", format: "%.1f", get: func(s *result.Sample) (float64, bool) {
		sv := s.HeadlineServer()
		if sv == nil {
			return 0, false
		}
		v := f(sv.Figures)
		return float64(v) / (1 << 20), v > 0
	}}
}

// mCPUPercent is the server's CPU in % of one core over the load window.
var mCPUPercent = metric{name: "CPU % of a core", format: "%.1f", get: func(s *result.Sample) (float64, bool) {
	sv := s.HeadlineServer()
	if sv == nil || sv.Figures.WindowSeconds == 0 {
		return 0, false
	}
	return sv.Figures.Cores * 100, true
}}

// memoryTable is the server's RSS and PSS by phase.
func (g *grid) memoryTable() Table {
	mib := rssMetric
	return g.byCell("Server memory (MiB): median of the baseline, load and recovery samples, and the largest sample", []metric{
		mib("RSS baseline", func(f result.ServerFigures) uint64 { return f.RSSBaseline }),
		mib("RSS load", func(f result.ServerFigures) uint64 { return f.RSSLoad }),
		mib("RSS after", func(f result.ServerFigures) uint64 { return f.RSSAfter }),
		mib("RSS peak", func(f result.ServerFigures) uint64 { return f.RSSPeak }),
		mib("PSS load", func(f result.ServerFigures) uint64 { return f.PSSLoad }),
		mib("PSS peak", func(f result.ServerFigures) uint64 { return f.PSSPeak }),
	})
}

var serviceP99 = metric{name: "Service p99", unit: "ms", format: "%.2f", better: -1, get: func(s *result.Sample) (float64, bool) {
	if !loadOK(s) || s.Load.Service == nil || s.Load.Service.Count == 0 {
		return 0, false
	}
	return float64(s.Load.Service.P(99)) / 1000, true
}}

// lateDropped is the "Late / dropped" column: totals over the repeats.
var lateDropped = column{"Late / dropped", func(ss []*result.Sample) string {
	var late, dropped int64
	for _, s := range ss {
		if s.Load != nil && s.Load.Rate != nil {
			late += s.Load.Rate.Late
			dropped += s.Load.Rate.Dropped
		}
	}
	return count(late) + " / " + count(dropped)
}}

// slackNote says, when a rate's samples ran with a timer slack, that their
// sends waited up to it to leave together.
func slackNote(rows []Row) []string {
	var most int64
	for _, r := range rows {
		if r.Sample.Load != nil && r.Sample.Load.Rate != nil {
			most = max(most, timerSlack(r.Sample))
		}
	}
	if most == 0 {
		return nil
	}
	return []string{fmt.Sprintf("Sends waited up to a timer slack of %s after they fell due, to leave together (fewer wake-ups of the client); "+
		"the schedule lag and the latency from the due time include that wait.", result.FormatUS(most))}
}

func hasRate(rows []Row) bool {
	for _, r := range rows {
		if r.Sample.Load != nil && r.Sample.Load.Rate != nil {
			return true
		}
	}
	return false
}

// statsTable is the target statistics, one row per case and variant, one
// column per statistic any sample has.
func (g *grid) statsTable() (Table, bool) {
	names := map[string]bool{}
	for _, ss := range g.cell {
		for _, s := range ss {
			for k := range s.Stats {
				names[k] = true
			}
		}
	}
	if len(names) == 0 {
		return Table{}, false
	}
	var ms []metric
	for _, k := range slices.Sorted(maps.Keys(names)) {
		ms = append(ms, metric{name: k, format: "%.0f", get: func(s *result.Sample) (float64, bool) {
			v, ok := s.Stats[k]
			return v, ok
		}})
	}
	return g.byCell("Target statistics over the load window", ms), true
}

// targetsTable is the provenance of the targets.
func targetsTable(targets map[string]result.Provenance) (Table, bool) {
	if len(targets) == 0 {
		return Table{}, false
	}
	names := slices.Sorted(maps.Keys(targets))
	t := Table{Caption: "Targets and their provenance", Header: []string{"Target", "Kind", "Version", "Binary", "SHA-256", "Git", "Settings"}, Labels: 7}
	for _, n := range names {
		p := targets[n]
		git := p.GitRev
		if p.GitDirty {
			git += " (dirty)"
		}
		var set []string
		for k, v := range p.Settings {
			set = append(set, k+"="+v)
		}
		sort.Strings(set)
		t.Rows = append(t.Rows, []string{n, p.Kind, p.Version, p.Binary, p.SHA256, git, strings.Join(set, ", ")})
	}
	return t, true
}

// plansTable summarises the recorded query plans (EXPLAIN (FORMAT JSON)):
// each node's type, index and relation, outermost first; the file keeps
// the whole plans.
func plansTable(targets map[string]result.Provenance) (Table, bool) {
	t := Table{Caption: "Query plans (EXPLAIN, outermost node first; the results file holds them whole)", Header: []string{"Target", "Statement", "Plan"}, Labels: 3}
	for _, n := range slices.Sorted(maps.Keys(targets)) {
		plans := targets[n].Plans
		for _, label := range slices.Sorted(maps.Keys(plans)) {
			t.Rows = append(t.Rows, []string{n, label, planSummary(plans[label])})
		}
	}
	return t, len(t.Rows) > 0
}

// planNode is the part of an EXPLAIN (FORMAT JSON) node a summary shows.
type planNode struct {
	NodeType string     `json:"Node Type"`
	Index    string     `json:"Index Name"`
	Relation string     `json:"Relation Name"`
	Plans    []planNode `json:"Plans"`
}

// planSummary is "Index Scan using items_pkey on items", nested nodes
// joined by " → "; the text itself when it is not an EXPLAIN JSON document.
func planSummary(doc string) string {
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(doc), &plans); err != nil || len(plans) == 0 || plans[0].Plan.NodeType == "" {
		return doc
	}
	var parts []string
	var walk func(n planNode)
	walk = func(n planNode) {
		p := n.NodeType
		if n.Index != "" {
			p += " using " + n.Index
		}
		if n.Relation != "" {
			p += " on " + n.Relation
		}
		parts = append(parts, p)
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(plans[0].Plan)
	return strings.Join(parts, " → ")
}

// samplesTable lists every sample: key, when, its headline figures, its
// verdict and why.
func samplesTable(rows []Row) Table {
	t := Table{Caption: "Samples", Header: []string{"#", "Case", "Variant", "Repeat", "Started (UTC)", "Requests", "Requests/s", "p99 (ms)", "Errors", "Verdict"}, Labels: 3}
	for i, r := range rows {
		s := r.Sample
		req, rps, p99, errs := "–", "–", "–", "–"
		if s.Load != nil {
			req = count(s.Load.Requests)
			rps = fmt.Sprintf("%.0f", s.Load.RequestsPerSec)
			if s.Load.Latency.Count > 0 {
				p99 = fmt.Sprintf("%.2f", float64(s.Load.Latency.P(99))/1000)
			}
			errs = count(s.Load.Errors + s.Load.Timeouts + s.Load.Unexpected)
		}
		verdict := "HEALTHY"
		switch {
		case s.Error != "":
			verdict = "FAILED: " + s.Error
		case !s.Verdict.Healthy:
			verdict = "UNHEALTHY: " + strings.Join(s.Verdict.Reasons, "; ")
		}
		t.Rows = append(t.Rows, []string{fmt.Sprint(i + 1), r.Case, r.Variant, fmt.Sprint(s.Repeat), s.Started.Format("2006-01-02 15:04:05"), req, rps, p99, errs, verdict})
	}
	return t
}
