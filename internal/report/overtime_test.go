package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/result"
)

// timedSample is a sample of 10 s: phases baseline 0–2, load 2–8,
// recovery 8–10; a resource sample every second (and an extra one 5 ms
// after the load began, as a phase edge records it), the server using
// half a core during the load; the client's CPU once per second; a
// timeline of 6 s at 1,000 req/s with errors in its third second.
func timedSample() *result.Sample {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	s := &result.Sample{Case: "c", Variant: "v", Repeat: 1, Verdict: result.Verdict{Healthy: true},
		Phases: []result.Phase{{Name: "pre-check", Start: at(0), End: at(0.001)}, {Name: "baseline", Start: at(0), End: at(2)}, {Name: "load", Start: at(2), End: at(8)}, {Name: "recovery", Start: at(8), End: at(10)}},
		Load:   &result.Load{Start: at(2), End: at(8), Seconds: 6, RequestsPerSec: 1000, Errors: 3}}
	cpu := 0.0
	offsets := []float64{0, 1, 2, 2.005, 3, 4, 5, 6, 7, 8, 9, 10}
	for i, off := range offsets {
		if i > 0 && off > 2 && off <= 8 {
			cpu += 0.5 * (off - offsets[i-1])
		}
		s.Server = orServer(s.Server)
		s.Server.Samples = append(s.Server.Samples, result.ResourceSample{Time: at(off), Offset: off, Phase: phaseAt(off), CPUUser: cpu, RSS: uint64(10+off) << 20})
		s.ClientCPU = append(s.ClientCPU, result.ClientCPUSample{Time: at(off), Offset: off, Phase: phaseAt(off), UserSeconds: off * 0.25})
	}
	for sec := 0; sec < 6; sec++ {
		x := result.Second{T: sec, Requests: 1000, P50US: 500, P99US: 2000}
		if sec == 2 {
			x.Errors = 3
		}
		s.Load.Timeline = append(s.Load.Timeline, x)
	}
	return s
}

func orServer(s *result.Server) *result.Server {
	if s == nil {
		return &result.Server{}
	}
	return s
}

func phaseAt(off float64) string {
	switch {
	case off < 2:
		return "baseline"
	case off < 8:
		return "load"
	}
	return "recovery"
}

func panelNamed(t *testing.T, cs []Chart, title string) Chart {
	t.Helper()
	for _, c := range cs {
		if c.Title == title {
			return c
		}
	}
	t.Fatalf("no panel %q", title)
	return Chart{}
}

// TestSamplePanels checks the over-time panels of one sample: one time
// axis, the phases as bands (instants left out), CPU as a rate between
// readings with the edge reading merged, timeline points mid-second.
func TestSamplePanels(t *testing.T) {
	ps := samplePanels(timedSample())
	var titles []string
	for _, p := range ps {
		titles = append(titles, p.Title)
		if !p.OverTime || p.XMin != 0 || p.XMax != 10 || len(p.Bands) != 3 || p.Bands[1] != (Band{"load", 2, 8}) {
			t.Errorf("%s: axis %v–%v, bands %v: want 0–10 s and baseline, load, recovery", p.Title, p.XMin, p.XMax, p.Bands)
		}
	}
	if got := strings.Join(titles, ","); got != "Server memory,Server CPU,Client CPU (benchrig),Requests per second,Latency per second,Errors per second" {
		t.Errorf("panels %s", got)
	}
	cpu := panelNamed(t, ps, "Server CPU").Series[0].Points
	for _, p := range cpu {
		want := 0.0
		if p.X > 2 && p.X <= 8 {
			want = 0.5
		}
		if p.Y < want-1e-9 || p.Y > want+1e-9 || p.X == 2.005 {
			t.Errorf("server CPU at %v s: %v cores, want %v (the reading 5 ms after the edge merged into the next)", p.X, p.Y, want)
		}
	}
	if c := panelNamed(t, ps, "Client CPU (benchrig)").Series[0].Points; len(c) == 0 || c[0].Y != 0.25 {
		t.Errorf("client CPU %v: want 0.25 cores", c)
	}
	req := panelNamed(t, ps, "Requests per second").Series[0].Points
	if len(req) != 6 || req[0].X != 2.5 || req[0].Y != 1000 {
		t.Errorf("requests per second %v: want 6 points from 2.5 s at 1,000", req)
	}
	lat := panelNamed(t, ps, "Latency per second")
	if len(lat.Series) != 2 || lat.Series[0].Name != "p99" || !lat.Series[1].Dashed || lat.Series[1].Points[0].Y != 0.5 {
		t.Errorf("latency panel %+v", lat.Series)
	}

	// At 340 px "baseline" (2 s of 10) does not fit its band: its initial does.
	svg := chartSVG(panelNamed(t, ps, "Server CPU"), sizePanel, "chart small overtime")
	es := parseSVG(t, svg)
	if n := len(svgElems(es, "rect", "band")); n != 3 {
		t.Errorf("%d bands drawn, want 3", n)
	}
	if !strings.Contains(svg, ">b</text>") || !strings.Contains(svg, ">load</text>") || !strings.Contains(svg, ">seconds</text>") {
		t.Errorf("phase names or the time unit missing:\n%s", svg)
	}
	if len(svgElems(es, "circle", "pt")) != 0 {
		t.Error("over-time lines drew markers")
	}
}

// TestOverlayAndErrors checks the case view (a line per repeat) and the
// errors section of two samples, one with errors by message.
func TestOverlayAndErrors(t *testing.T) {
	a, b := timedSample(), timedSample()
	b.Repeat = 2
	b.Load.Messages = map[string]int64{"error: connection reset by peer": 2, "unexpected: status 500": 5}
	b.Load.Reconnects = 2
	src := &Source{Path: "x.json", Rows: []Row{{"c", "v", a}, {"c", "v", b}}}
	d := ReportDoc(src)
	var ot, errs Section
	for _, s := range d.Sections {
		switch s.Title {
		case "Over time":
			ot = s
		case "Errors":
			errs = s
		}
	}
	if len(ot.Groups) != 1 || len(ot.Groups[0].Charts) != 4 || len(ot.Groups[0].Details) != 2 || !ot.Groups[0].Details[0].Open || ot.Groups[0].Details[1].Open {
		t.Fatalf("over time: %+v", ot.Groups)
	}
	if s := ot.Groups[0].Charts[0].Series; len(s) != 2 || s[1].Name != "repeat 2" {
		t.Errorf("overlay series %+v: want one per repeat", s)
	}
	if len(errs.Tables) != 3 {
		t.Fatalf("errors section %+v", errs)
	}
	if r := errs.Tables[1].Rows; len(r) != 2 || r[0][2] != "unexpected: status 500" || r[0][3] != "5" {
		t.Errorf("messages per case %q: want status 500 ×5 first", r)
	}
	if r := errs.Tables[0].Rows[0]; strings.Join(r[2:], " ") != "6 0 0 2" {
		t.Errorf("totals %q: want 6 errors, 2 reconnects", r)
	}
	var md bytes.Buffer
	if err := Markdown(&md, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### c", "#### v · repeat 1 · 1,000 req/s", "| unexpected: status 500 | 5 |", "**Phases of v, repeat 2**"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

// TestWarnings checks the noise warning and the A/A warning.
func TestWarnings(t *testing.T) {
	src := source("noise", map[[2]string][][2]float64{
		{"4 conns", "quiet"}: {{100, 1}, {102, 1}, {104, 1}},
		{"4 conns", "noisy"}: {{100, 1}, {130, 1}, {90, 1}},
	})
	n := noiseNotes(newGrid(src.Rows))
	if len(n) != 1 || !strings.Contains(n[0], "4 conns · noisy (40 %)") || strings.Contains(n[0], "quiet") || !strings.Contains(n[0], "REPEATS=5") {
		t.Errorf("noise notes %q", n)
	}
	aa := func(rpsA, rpsB float64, argvB string) []string {
		mk := func(rps float64, name, argv string) *result.Sample {
			s := synth(rps, 1)
			s.Target = &result.TargetInfo{Name: name, Kind: "command", Argv: []string{"./bin/stall", "-addr", argv}}
			s.Config = &result.Config{}
			if err := json.Unmarshal([]byte(`{"cell":{"id":"`+name+`/c=4","target":"`+name+`","connections":4},"engine":{"seed":`+map[string]string{"a": "1", "b": "2"}[name]+`},"http":{"url":"http://`+argv+`/"}}`), s.Config); err != nil {
				t.Fatal(err)
			}
			return s
		}
		rows := []Row{{"4 conns", "a", mk(rpsA, "a", "127.0.0.1:4001")}, {"4 conns", "b", mk(rpsB, "b", argvB)}}
		return aaNotes(newGrid(rows))
	}
	if n := aa(49301, 25862, "127.0.0.1:4002"); len(n) != 1 || !strings.Contains(n[0], `"a" and "b" run the same command`) || !strings.Contains(n[0], "With 1 repeat") {
		t.Errorf("A/A of 49,301 vs 25,862: %q", n)
	}
	if n := aa(49301, 48000, "127.0.0.1:4002"); len(n) != 0 {
		t.Errorf("A/A within 3 %%: %q", n)
	}
	if n := aa(49301, 25862, "127.0.0.2:4002"); len(n) != 0 {
		t.Errorf("different commands warned as A/A: %q", n)
	}
}

// TestMixedMagnitudeBars checks that bars of 400 beside 52,000 get a log
// axis, said on the chart, and every bar its value.
func TestMixedMagnitudeBars(t *testing.T) {
	src := source("mixed", map[[2]string][][2]float64{{"a", "x"}: {{400, 1}}, {"b", "x"}: {{52000, 1}}})
	c := newGrid(src.Rows).scaledBars(mReqPerSec, "Requests/s")
	if !c.LogY || !strings.Contains(c.Title, "log scale") {
		t.Fatalf("chart %+v: want a log axis said in the title", c)
	}
	for _, sz := range []size{sizeWide, sizeNarrow} {
		es := parseSVG(t, chartSVG(c, sz, "chart"))
		bars := svgElems(es, "rect", "bar")
		if len(bars) != 2 || svgAttr(t, bars[0], "height") < 0.15*svgAttr(t, bars[1], "height") {
			t.Errorf("at %v wide, the bar of 400 is not readable beside 52,000: %v", sz.w, bars)
		}
		svg := chartSVG(c, sz, "chart")
		if !strings.Contains(svg, ">400</text>") || !strings.Contains(svg, ">52,000</text>") || !strings.Contains(svg, "req/s (log)") {
			t.Errorf("value labels or log unit missing at %v wide", sz.w)
		}
	}
	lin := newGrid(source("even", map[[2]string][][2]float64{{"a", "x"}: {{400, 1}}, {"b", "x"}: {{900, 1}}}).Rows).scaledBars(mReqPerSec, "Requests/s")
	if lin.LogY {
		t.Error("bars of 400 and 900 on a log axis")
	}
}

// TestCSVTidy checks one row per sample and figure, and messages.
func TestCSVTidy(t *testing.T) {
	s := timedSample()
	s.Load.Messages = map[string]int64{"error: x, with a comma": 3}
	var buf bytes.Buffer
	if err := CSV(&buf, &Source{Rows: []Row{{"c", "v", s}}}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, r := range recs[1:] {
		if len(r) != 8 || r[0] != "1" || r[2] != "c" || r[3] != "v" {
			t.Fatalf("row %q", r)
		}
		if _, dup := seen[r[5]]; dup {
			t.Errorf("figure %s twice", r[5])
		}
		seen[r[5]] = r[7]
	}
	if seen["requests_per_sec"] != "1000" || seen["errors"] != "3" || seen["message: error: x, with a comma"] != "3" || seen["healthy"] != "1" {
		t.Errorf("figures %v", seen)
	}
}

// TestParseGate checks the --fail-if syntax and its bounds.
func TestParseGate(t *testing.T) {
	for in, want := range map[string]Gate{
		"req/s < -5%":   {Figure: "Requests/s", Less: true, Pct: -5},
		" p99 > +10 % ": {Figure: "p99", Pct: 10},
		"P99.9>+0.5%":   {Figure: "p99.9", Pct: 0.5},
		"misses > 0%":   {Figure: "Misses", Pct: 0},
	} {
		g, err := ParseGate(in)
		if err != nil || g.Figure != want.Figure || g.Less != want.Less || g.Pct != want.Pct {
			t.Errorf("ParseGate(%q) = %+v, %v; want %+v", in, g, err, want)
		}
	}
	for _, bad := range []string{"", "req/s", "rps < -5", "qps < -5%", "p99 > x%", "p99 > +2000%", "p99 > NaN%", "misses < -5%", "misses > 200%"} {
		if _, err := ParseGate(bad); err == nil || !strings.Contains(err.Error(), "--fail-if") {
			t.Errorf("ParseGate(%q): %v, want an error naming --fail-if", bad, err)
		}
	}
}
