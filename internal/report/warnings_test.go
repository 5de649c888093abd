package report

import (
	"bytes"
	"encoding/json"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/result"
)

// planSample is a healthy pg sample with the given read plan counts.
func planSample(generic, custom float64, mode string) *result.Sample {
	return &result.Sample{Protocol: "pg", Started: time.Unix(0, 0).UTC(), Finished: time.Unix(1, 0).UTC(),
		Verdict: result.Verdict{Healthy: true},
		Load:    &result.Load{Requests: int64(generic + custom), Seconds: 1},
		Target:  &result.TargetInfo{Kind: "postgres", Settings: map[string]string{planModeSetting: mode}},
		Stats: map[string]float64{"plans.read.generic": generic, "plans.read.custom": custom,
			"plans.update.generic": 10, "plans.update.custom": 0, "plans.connections": 2}}
}

func TestPlanNotes(t *testing.T) {
	tests := []struct {
		name string
		rows []Row
		want []string // substrings of the one note; nil: no note
	}{
		{"custom on every call in every repeat", []Row{
			{"1 key", "any", planSample(0, 500, "force_custom_plan")},
			{"1 key", "any", planSample(0, 700, "force_custom_plan")},
			{"1 key", "any[array]", planSample(690, 10, "auto")},
		}, []string{"1 key · any:", `statement "read"`, "1,200 custom plans over 2 sample(s)", "plan_cache_mode force_custom_plan", "form: array", "force_generic_plan"}},
		{"one repeat got generic plans", []Row{
			{"1 key", "any", planSample(0, 500, "auto")},
			{"1 key", "any", planSample(5, 495, "auto")},
		}, nil},
		{"no plan counts (not pg, or an older file)", []Row{
			{"1 key", "http", &result.Sample{Protocol: "http", Stats: map[string]float64{"xact_commit": 3}}},
		}, nil},
		{"statement never ran", []Row{
			{"1 key", "any", planSample(0, 0, "auto")},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			notes := planNotes(newGrid(tt.rows))
			if tt.want == nil {
				if len(notes) != 0 {
					t.Errorf("notes %q, want none", notes)
				}
				return
			}
			if len(notes) != 1 {
				t.Fatalf("notes %q, want one", notes)
			}
			for _, w := range tt.want {
				if !strings.Contains(notes[0], w) {
					t.Errorf("note %q lacks %q", notes[0], w)
				}
			}
		})
	}
}

// TestPlanNoteFormats checks that the warning reaches every report format
// that shows warnings: the console, text, Markdown, HTML and the JSON
// summary.
func TestPlanNoteFormats(t *testing.T) {
	src := &Source{Path: "plans.json", Kind: "suite", Title: "plans", Rows: []Row{{"1 key", "any", planSample(0, 500, "force_custom_plan")}}}
	const want = "Custom-planned on every call: 1 key · any"
	var out bytes.Buffer
	if err := Console(&out, src); err != nil {
		t.Fatal(err)
	}
	formats := renderDoc(t, ReportDoc(src))
	formats["console"] = out.String()
	formats["html"] = html.UnescapeString(formats["html"])
	js, err := json.Marshal(Summarise(src))
	if err != nil {
		t.Fatal(err)
	}
	var sum Summary
	if err := json.Unmarshal(js, &sum); err != nil {
		t.Fatal(err)
	}
	formats["json"] = strings.Join(sum.Notes, "\n")
	for name, text := range formats {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks the plan warning %q", name, want)
		}
	}
}

// renderDoc renders d as text, Markdown and HTML, by format name.
func renderDoc(t *testing.T, d *Doc) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, render := range map[string]func(*bytes.Buffer) error{
		"text": func(b *bytes.Buffer) error { return Text(b, d) },
		"md":   func(b *bytes.Buffer) error { return Markdown(b, d) },
		"html": func(b *bytes.Buffer) error { return HTML(b, d) },
	} {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = b.String()
	}
	return out
}
