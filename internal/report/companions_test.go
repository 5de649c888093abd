package report

import (
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/result"
)

// withServer gives s a server of cpu seconds over a 2 s load window for
// its requests, peak memory mib, sampled at t0.
func serverOf(t0 time.Time, cpu float64, completed int64, mib uint64) *result.Server {
	return &result.Server{
		Figures: result.ServerFigures{WindowSeconds: 2, CPUSeconds: cpu, Cores: cpu / 2, MachinePercent: cpu / 4 * 100,
			MicrosPerRequest: cpu * 1e6 / float64(completed), Completed: completed, OnlineCPUs: 2, RSSPeak: mib << 20},
		Samples: []result.ResourceSample{
			{Time: t0, Offset: 0, Phase: "load", RSS: mib << 20},
			{Time: t0.Add(time.Second), Offset: 1, Phase: "load", CPUUser: cpu / 2, RSS: mib << 20},
			{Time: t0.Add(2 * time.Second), Offset: 2, Phase: "load", CPUUser: cpu, RSS: mib << 20},
		},
	}
}

// TestCompanionsInReports: a sample whose target (an app) has a headline
// companion (its database): every report's server figures are the
// database's, the processes table shows both with their roles, the
// sample's charts draw both, and a sample without companions is as
// before (its own server is the headline).
func TestCompanionsInReports(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	app := synth(1000, 2)
	app.Load.Requests = 2000
	app.Target = &result.TargetInfo{Name: "app", Kind: "command"}
	app.Server = serverOf(t0, 0.2, 2000, 90) // 100 µs/request
	app.Companions = []result.Companion{{Name: "pg", Role: result.RoleHeadline, Target: &result.TargetInfo{Kind: "postgres", PID: 42},
		Server: serverOf(t0, 0.1, 2000, 120)}} // 50 µs/request
	plain := synth(2000, 1)
	plain.Load.Requests = 4000
	plain.Server = serverOf(t0, 0.4, 4000, 130) // 100 µs/request
	src := &Source{Path: "c.json", Kind: "suite", Title: "c", Rows: []Row{
		{Case: "64 conns", Variant: "app", Sample: app}, {Case: "64 conns", Variant: "pg", Sample: plain}}}

	if v, ok := mServerUS.get(app); !ok || v != 50 {
		t.Errorf("server µs/request of the app sample = %v, want the headline companion's 50", v)
	}
	if v, _ := mPeakMiB.get(app); v != 120 {
		t.Errorf("server peak MiB = %v, want the database's 120", v)
	}
	if v, _ := mServerUS.get(plain); v != 100 {
		t.Errorf("a sample without companions: %v µs/request, want its own 100", v)
	}

	g := newGrid(src.Rows)
	tb, ok := g.processesTable()
	if !ok || len(tb.Rows) != 2 {
		t.Fatalf("processes table %+v, want the app and pg (the plain sample has no companions)", tb)
	}
	want := [][]string{
		{"64 conns", "app", targetLabel, "target", "0.10", "5.0", "100.0", "90.0"},
		{"64 conns", "app", "pg", "headline", "0.05", "2.5", "50.0", "120.0"},
	}
	for i, w := range want {
		if strings.Join(tb.Rows[i], "|") != strings.Join(w, "|") {
			t.Errorf("row %d = %q, want %q", i, tb.Rows[i], w)
		}
	}

	d := ReportDoc(src)
	var md, html, text strings.Builder
	if err := Markdown(&md, d); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, d); err != nil {
		t.Fatal(err)
	}
	if err := Matrix(&text, src.Rows); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"markdown": md.String(), "html": html.String(), "text": text.String()} {
		if !strings.Contains(out, "Sampled processes") || !strings.Contains(out, "headline") {
			t.Errorf("%s report lacks the processes table", name)
		}
	}
	panels := samplePanels(app)
	var cpu *Chart
	for i := range panels {
		if panels[i].Title == "CPU of the target and its companions" {
			cpu = &panels[i]
		}
	}
	if cpu == nil || len(cpu.Series) != 2 || cpu.Series[0].Name != "app" || cpu.Series[1].Name != "pg" || len(cpu.Series[1].Points) == 0 {
		t.Errorf("the sample's CPU chart does not draw the app and pg: %+v", cpu)
	}
}
