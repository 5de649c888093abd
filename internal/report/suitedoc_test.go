package report

import (
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/result"
)

func sectionTitles(d *Doc) []string {
	var out []string
	for _, s := range d.Sections {
		out = append(out, s.Title)
	}
	return out
}

func TestReportDocSections(t *testing.T) {
	src := source("demo", map[[2]string][][2]float64{
		{"4 conns", "go"}:   {{100, 1}, {104, 1}, {108, 1}},
		{"4 conns", "node"}: {{50, 2}, {55, 2}},
	})
	d := ReportDoc(src)
	if got := strings.Join(sectionTitles(d), ","); got != "Throughput,Latency,Resources,Errors,Over time,Samples" {
		t.Errorf("closed-loop sections %q", got)
	}
	if len(d.Notes) != 0 {
		t.Errorf("notes of healthy samples: %q", d.Notes)
	}
	bars := d.Sections[0].Charts[0]
	if bars.Kind != Bars || len(bars.Series) != 2 || bars.Series[0].Points[0] != (Point{Y: 104, Lo: 100, Hi: 108}) {
		t.Errorf("throughput chart %+v: want go's median 104 [100–108]", bars)
	}
	if got := len(d.Sections[len(d.Sections)-1].Tables[0].Rows); got != 5 {
		t.Errorf("samples table has %d rows, want every sample (5)", got)
	}

	// A rate sample, target statistics, an unhealthy, a failed and a
	// saturated sample.
	rate := synth(1000, 3)
	rate.Load.Rate = &result.RateStats{Target: 1000, Coverage: 99.5, Late: 7}
	rate.Load.Service = &result.Latency{Count: 1000, Percentiles: []result.Percentile{{Q: 99, US: 1500}}}
	rate.Load.Client.Saturated = true
	rate.Stats = map[string]float64{"xact_commit": 1001}
	rate.Server = &result.Server{Figures: result.ServerFigures{WindowSeconds: 60, Cores: 0.079,
		RSSBaseline: 61 << 20, RSSLoad: 159 << 20, RSSAfter: 174 << 20}}
	rate.Assertions = []result.Assertion{{Expr: "cache_hits == requests * keys", Holds: true, Values: "cache_hits = 640, requests * keys = 640"}}
	bad := synth(10, 900)
	bad.Verdict = result.Verdict{Healthy: false, Reasons: []string{"p99 900ms > 250ms"}}
	bad.Assertions = []result.Assertion{{Expr: "cache_hits == requests * keys", Holds: false, Values: "cache_hits = 700, requests * keys = 640"}}
	src.Rows = append(src.Rows,
		Row{Case: "1000 req/s", Variant: "go", Sample: rate},
		Row{Case: "1000 req/s", Variant: "node", Sample: bad},
		Row{Case: "1000 req/s", Variant: "node", Sample: &result.Sample{Error: "target exited"}})
	d = ReportDoc(src)
	if got := strings.Join(sectionTitles(d), ","); got != "Throughput,Latency,Resources,Constant rate,Errors,Over time,Target statistics,Assertions,Samples" {
		t.Errorf("sections %q", got)
	}
	// each case and variant's assertions: held in how many samples, the
	// values of the first that failed
	asserts := d.Sections[len(d.Sections)-2].Tables[0]
	var got []string
	for _, r := range asserts.Rows {
		got = append(got, strings.Join(r, " | "))
	}
	if want := "1000 req/s | go | cache_hits == requests * keys | cache_hits = 640, requests * keys = 640 | 1/1\n" +
		"1000 req/s | node | cache_hits == requests * keys | cache_hits = 700, requests * keys = 640 | 0/1"; strings.Join(got, "\n") != want {
		t.Errorf("assertions table:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	notes := strings.Join(d.Notes, "\n")
	for _, want := range []string{"1 of 8 samples failed", "1 of 8 samples are UNHEALTHY", "In 1 sample the client used over 90 %"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	if r := row(t, d, "Open loop: memory", "1000 req/s"); strings.Join(r[2:], " ") != "61.0 159.0 174.0 7.9 3.00 99.5 1/1" {
		t.Errorf("open-loop row %q: want RSS 61/159/174 MiB, CPU 7.9 %%, p99 3.00 ms, coverage 99.5, healthy 1/1", r)
	}
	if r := row(t, d, "Open loop: schedule", "1000 req/s"); r[2] != "1.50" || r[3] != "7 / 0" {
		t.Errorf("open-loop schedule row %q: want service p99 1.50 ms, 7 late", r)
	}
	rateText := func(d *Doc) string {
		for _, s := range d.Sections {
			if s.Title == "Constant rate" {
				return strings.Join(s.Text, " ")
			}
		}
		return ""
	}
	if txt := rateText(d); strings.Contains(txt, "timer slack") {
		t.Errorf("no sample ran with a timer slack, yet: %q", txt)
	}
	rate.Config = &result.Config{Engine: result.EngineConfig{Rate: 1000, TimerSlackUS: 1000}} // its sends waited up to 1 ms to leave together
	if txt := rateText(ReportDoc(src)); !strings.Contains(txt, "timer slack of 1.00 ms") {
		t.Errorf("the rate section does not name the timer slack: %q", txt)
	}
	for _, ch := range d.Sections[1].Charts {
		// 4 conns spans 0.5–2 ms: linear; 1000 req/s spans 1.5–900 ms: log
		// (its service time has one point: linear).
		if ch.Kind != Lines || strings.HasPrefix(ch.Title, "Service time") {
			continue
		}
		if want := strings.HasSuffix(ch.Title, "1000 req/s"); ch.LogY != want {
			t.Errorf("%s: log Y %v, want %v", ch.Title, ch.LogY, want)
		}
	}
	samples := d.Sections[len(d.Sections)-1].Tables[0]
	verdicts := ""
	for _, r := range samples.Rows {
		verdicts += r[len(r)-1] + "\n"
	}
	if !strings.Contains(verdicts, "UNHEALTHY: p99 900ms > 250ms") || !strings.Contains(verdicts, "FAILED: target exited") {
		t.Errorf("sample verdicts:\n%s", verdicts)
	}
}

func TestPercentileX(t *testing.T) {
	for q, want := range map[float64]float64{50: 2, 90: 10, 99: 100, 99.9: 1000, 99.99: 10000} {
		if got := percentileX(q); got != want {
			t.Errorf("percentileX(%v) = %v, want %v", q, got, want)
		}
	}
}

func TestPlanSummary(t *testing.T) {
	doc := `[{"Plan": {"Node Type": "Nested Loop", "Plans": [
		{"Node Type": "Function Scan", "Relation Name": ""},
		{"Node Type": "Index Scan", "Index Name": "items_pkey", "Relation Name": "items"}]}}]`
	if got, want := planSummary(doc), "Nested Loop → Function Scan → Index Scan using items_pkey on items"; got != want {
		t.Errorf("planSummary = %q, want %q", got, want)
	}
	if got := planSummary("not json"); got != "not json" {
		t.Errorf("planSummary of text = %q", got)
	}
	tb, ok := plansTable(map[string]result.Provenance{"pg": {Plans: map[string]string{"b": doc, "a": "x"}}})
	if !ok || len(tb.Rows) != 2 || tb.Rows[0][1] != "a" || tb.Rows[1][2] != planSummary(doc) {
		t.Errorf("plans table %+v", tb)
	}
	if _, ok := plansTable(map[string]result.Provenance{"http": {}}); ok {
		t.Error("a plans table without plans")
	}
}

// A sample whose client busy-polled says so in the notes, with the longest
// poll and the median share of the client's CPU it took.
func TestReportDocBusyPollNote(t *testing.T) {
	src := source("demo", map[[2]string][][2]float64{{"4 conns", "go"}: {{100, 1}, {104, 1}}})
	for i, share := range []float64{0.4, 0.6} {
		c := &src.Rows[i].Sample.Load.Client
		c.UserSeconds, c.SystemSeconds, c.BusyPollUS, c.BusyPollSeconds = 0.5, 0.5, 20, share
	}
	notes := strings.Join(ReportDoc(src).Notes, "\n")
	want := "In 2 samples the client polled for answers up to 20 µs before it slept (busy poll), so that the server's answers did not have to wake it: " +
		"its client cores and µs/request include that polling (median 50 % of its CPU)."
	if !strings.Contains(notes, want) {
		t.Errorf("notes %q lack %q", notes, want)
	}
}

// Samples whose loops ran on io_uring say so in the notes, and a mix of
// io_uring and epoll says how many of each.
func TestReportDocIONote(t *testing.T) {
	src := source("demo", map[[2]string][][2]float64{{"4 conns", "go"}: {{100, 1}, {104, 1}, {102, 1}}})
	for i, io := range []string{"io_uring", "io_uring", "epoll"} {
		src.Rows[i].Sample.Load.Client.IO = io
	}
	notes := strings.Join(ReportDoc(src).Notes, "\n")
	want := "In 2 samples the client's event loops ran on io_uring (client.io; placement.io_uring): one system call a pass " +
		"where epoll takes a wait, a read and a write per connection, so their client cores and µs/request are lower for the same work; " +
		"1 sample ran on epoll, whose client figures are not comparable with those."
	if !strings.Contains(notes, want) {
		t.Errorf("notes %q lack %q", notes, want)
	}
	if strings.Contains(notes, "coalesce") {
		t.Errorf("no wait coalesced, yet noted: %q", notes)
	}
	src.Rows[0].Sample.Load.Client.CoalesceUS = 11
	src.Rows[1].Sample.Load.Client.CoalesceUS = 23
	want = "In 2 samples a wait on io_uring waited up to 23 µs for more answers before it handled the first " +
		"(client.coalesce_us; placement.coalesce: at most 1 % of the answers' moving-average latency): those answers' latency was taken at most that late."
	if notes := strings.Join(ReportDoc(src).Notes, "\n"); !strings.Contains(notes, want) {
		t.Errorf("notes %q lack %q", notes, want)
	}
	for i := range src.Rows {
		src.Rows[i].Sample.Load.Client.IO = "epoll"
	}
	if notes := strings.Join(ReportDoc(src).Notes, "\n"); strings.Contains(notes, "io_uring") {
		t.Errorf("epoll samples noted as io_uring: %q", notes)
	}
}
