package report

import (
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/result"
)

// withMetrics adds to timedSample a scrape every second: the JS heap in
// bytes, RSS as the target sees it, a labelled counter, and one failed
// scrape.
func withMetrics() *result.Sample {
	s := timedSample()
	t0 := s.Server.Samples[0].Time
	m := &result.Metrics{URL: "http://127.0.0.1:1/metrics", EverySeconds: 1,
		Series: []string{"nodejs_heap_size_used_bytes", "process_resident_memory_bytes", "http_requests_total"},
		Cost:   result.MetricsCost{Scrapes: 11, Failed: 1, InLoad: 6, WallSeconds: 0.011, Bytes: 4096},
		Notes:  []string{"1 of 11 metrics scrapes failed; the first: GET http://127.0.0.1:1/metrics: status 500, want 200"}}
	for i := 0; i <= 10; i++ {
		p := result.MetricsPoint{Time: t0.Add(time.Duration(i) * time.Second), Offset: float64(i), Phase: phaseAt(float64(i))}
		if i == 5 {
			p.Error = "status 500, want 200"
		} else {
			p.Values = map[string]float64{"nodejs_heap_size_used_bytes": float64(i+2) * (1 << 20), "process_resident_memory_bytes": float64(10+i) * (1 << 20),
				`http_requests_total{code="200"}`: float64(100 * i)}
		}
		m.Points = append(m.Points, p)
	}
	s.Metrics = m
	return s
}

// TestMetricsPanels: the series in bytes are drawn in MiB beside RSS in
// "Server memory" (dashed, short legend names, failed scrapes left out),
// the others in "Target metrics" under their full names; the sample's text states the scrapes'
// cost and load medians, and a report's notes the failures.
func TestMetricsPanels(t *testing.T) {
	s := withMetrics()
	ps := samplePanels(s)
	mem := panelNamed(t, ps, "Server memory")
	var names []string
	for _, sr := range mem.Series {
		names = append(names, sr.Name)
	}
	if got := strings.Join(names, ","); got != "RSS,heap_size_used,resident_memory" {
		t.Fatalf("memory series %s", got)
	}
	heap := mem.Series[1]
	if !heap.Dashed || len(heap.Points) != 10 || heap.Points[0].X != 0 || heap.Points[0].Y != 2 || heap.Points[9].Y != 12 {
		t.Errorf("heap series %+v: want 10 dashed points in MiB on the sample's axis", heap)
	}
	other := panelNamed(t, ps, "Target metrics")
	if len(other.Series) != 1 || other.Series[0].Name != `http_requests_total{code="200"}` || other.Series[0].Points[10-1].Y != 1000 {
		t.Errorf("other metrics %+v", other.Series)
	}
	line := metricsSummary(s)
	for _, want := range []string{"11 scrapes every 1s", "6 during the load, 1 failed", "11.0 ms of client wall time", "4.0 KiB", "nodejs_heap_size_used_bytes 6.0 MiB"} {
		if !strings.Contains(line, want) {
			t.Errorf("summary %q lacks %q", line, want)
		}
	}
	notes := metricsNotes([]Row{{Sample: s}, {Sample: timedSample()}})
	if len(notes) != 1 || !strings.Contains(notes[0], "Target metrics (1 of 2 samples): 1 of 11 metrics scrapes failed") {
		t.Errorf("notes %q", notes)
	}
}

// TestShortNames: namespace and unit go when the rest is two words or
// more; colliding labels fall back to the full names.
func TestShortNames(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"nodejs_heap_size_used_bytes", "heap_bytes", `go_memstats_alloc_bytes{x="1"}`}, []string{"heap_size_used", "heap", `memstats_alloc{x="1"}`}},
		{[]string{"a_heap_used_bytes", "b_heap_used_bytes"}, []string{"a_heap_used_bytes", "b_heap_used_bytes"}},
	} {
		if got := shortNames(tc.in); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("shortNames(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestPanelLegendGrows: a panel whose legend wraps is drawn taller, so its
// plot keeps the height of the others.
func TestPanelLegendGrows(t *testing.T) {
	mem := panelNamed(t, samplePanels(withMetrics()), "Server memory")
	for i := 0; i < 4; i++ {
		mem.Series = append(mem.Series, Series{Name: "another_long_series_name", Points: mem.Series[0].Points})
	}
	svg := chartSVG(mem, sizePanel, "chart small overtime")
	if rows := legendRows(mem, sizePanel); rows < 3 || !strings.Contains(svg, `height="`+svgNum(sizePanel.h+float64(rows-1)*18)+`"`) {
		t.Errorf("%d legend rows; svg head %s", rows, svg[:200])
	}
}

// TestFloorLine: the floor is one sentence per protocol, or says why it
// is missing.
func TestFloorLine(t *testing.T) {
	f := &result.Floor{Seconds: 0.3, Protocols: []result.FloorEntry{
		{Protocol: "http", Requests: 9000, P50US: 18, P99US: 40, ClientCPUUS: 9},
		{Protocol: "pg", Error: "connect to the null peer: refused"}}}
	got := FloorLine(f)
	if !strings.HasPrefix(got, "benchrig's own floor here: http p50 18 µs, p99 40 µs, 9.0 µs CPU per request; pg not measured (connect to the null peer: refused)") {
		t.Errorf("FloorLine = %q", got)
	}
	if FloorLine(nil) != "" || !strings.Contains(FloorLine(&result.Floor{Skipped: "--no-calibrate"}), "not measured (--no-calibrate)") {
		t.Errorf("nil or skipped floor: %q", FloorLine(&result.Floor{Skipped: "--no-calibrate"}))
	}
}

// TestMetricsOverlay: a case's repeats are overlaid by the first metric in
// bytes the suite names, in MiB.
func TestMetricsOverlay(t *testing.T) {
	a, b := withMetrics(), withMetrics()
	b.Repeat = 2
	c := panelNamed(t, overlayPanels([]*result.Sample{a, b}), "Metric heap_size_used")
	if c.Unit != "MiB" || len(c.Series) != 2 || c.Series[1].Name != "repeat 2" || len(c.Series[0].Points) != 10 || c.Series[0].Points[0].Y != 2 {
		t.Errorf("overlay %+v", c)
	}
}
