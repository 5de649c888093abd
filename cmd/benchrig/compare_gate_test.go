package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/report"
)

// TestCompareFailIf runs compare --fail-if on committed results files: one
// server under two names and the same server with twice the service time,
// 5 repeats each (compare.json), and the same at 1 repeat (aa1.json).
func TestCompareFailIf(t *testing.T) {
	cmp := filepath.Join(fixtures, "results", "compare.json")
	aa1 := filepath.Join(fixtures, "results", "aa1.json")
	gates := []string{"--fail-if", "req/s < -5%", "--fail-if", "p99 > +10%"}
	for _, tc := range []struct {
		name      string
		args      []string
		code      int
		stderr    []string
		notStderr string
	}{
		{"a real 2× change at 5 repeats fails", []string{cmp, "--a", "stall-a hello", "--b", "stall-slow hello"}, 3,
			[]string{`--fail-if "req/s < -5%": 4 conns · stall-a hello → stall-slow hello: Requests/s median`, `--fail-if "p99 > +10%"`, "p = 0.00794 (n = 5 + 5)"}, "warning"},
		{"the reverse change, an improvement, passes", []string{cmp, "--a", "stall-slow hello", "--b", "stall-a hello"}, 0, nil, "significant change"},
		{"an A/A pair passes", []string{cmp, "--a", "stall-a hello", "--b", "stall-a-again hello"}, 0, nil, "significant change"},
		{"1 repeat warns and passes", []string{aa1, "--a", "stall-a hello", "--b", "stall-slow hello"}, 0,
			[]string{"warning:", "has 1 and 1 repeats", "cannot fail it", "Run 5 repeats or more"}, "significant change"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"compare"}, tc.args...), gates...)
			_, stderr, code := invoke(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if tc.notStderr != "" && strings.Contains(stderr, tc.notStderr) {
				t.Errorf("stderr has %q:\n%s", tc.notStderr, stderr)
			}
		})
	}
	// The reverse direction is a significant improvement: p99 < -10% is a
	// gate on an improvement too, and fails.
	if _, stderr, code := invoke(t, "compare", cmp, "--a", "stall-slow hello", "--b", "stall-a hello", "--fail-if", "p99 < -10%"); code != 3 || !strings.Contains(stderr, "p99 median") {
		t.Errorf("p99 < -10%% on a halved p99: exit %d, want 3:\n%s", code, stderr)
	}
	for _, bad := range []string{"req/s -5%", "qps < -5%", "p99 > 10", "p99 > +5000%"} {
		if _, stderr, code := invoke(t, "compare", cmp, "--a", "stall-a hello", "--b", "stall-slow hello", "--fail-if", bad); code != 2 || !strings.Contains(stderr, "--fail-if") {
			t.Errorf("--fail-if %q: exit %d, want 2 naming the flag: %s", bad, code, stderr)
		}
	}
}

// TestCompareJSON checks compare --json: the computed comparison, with
// both medians, the change and p for each figure.
func TestCompareJSON(t *testing.T) {
	cmp := filepath.Join(fixtures, "results", "compare.json")
	out, stderr, code := invoke(t, "compare", cmp, "--a", "stall-a hello", "--b", "stall-slow hello", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var cs report.CompareSummary
	if err := json.Unmarshal([]byte(out), &cs); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if cs.Schema != report.CompareSummarySchema || len(cs.Comparisons) == 0 {
		t.Fatalf("summary %+v", cs)
	}
	c := cs.Comparisons[0]
	if c.Figure != "Requests/s" || c.NA != 5 || c.NB != 5 || !c.Significant || c.Better != -1 || c.DeltaPct > -30 || c.MedianB >= c.MedianA {
		t.Errorf("requests/s comparison %+v: want a significant fall of more than 30 %% at 5 + 5 repeats", c)
	}
	if _, _, code := invoke(t, "compare", cmp, "--a", "stall-a hello", "--b", "stall-slow hello", "--json", "-f", "md"); code != 2 {
		t.Errorf("--json with -f md: exit %d, want 2", code)
	}
}

// TestReportFormats checks that the format comes from -f or -o's
// extension, and that an unknown one is an error, not a text file.
func TestReportFormats(t *testing.T) {
	file := filepath.Join(fixtures, "results", "failing.json")
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string // in stderr (errors) or the file written
	}{
		{[]string{"-f", "yaml"}, 2, `--format "yaml": want text, md or html for a report, csv or json for data`},
		{[]string{"-o", filepath.Join(dir, "r.pdf")}, 2, "cannot write .pdf files"},
		{[]string{"-f", "csv", "-o", filepath.Join(dir, "r.html")}, 2, "names html"},
		{[]string{"-o", filepath.Join(dir, "r.csv")}, 0, "sample,key,case,variant,repeat,figure,unit,value\n"},
		{[]string{"-o", filepath.Join(dir, "r.json")}, 0, `"schema": "benchrig.summary/v1"`},
		{[]string{"-f", "md", "-o", filepath.Join(dir, "r.md")}, 0, "## Errors"},
	} {
		_, stderr, code := invoke(t, append([]string{"report", file}, tc.args...)...)
		if code != tc.code {
			t.Errorf("report %v: exit %d, want %d: %s", tc.args, code, tc.code, stderr)
			continue
		}
		got := stderr
		if code == 0 {
			b, err := os.ReadFile(tc.args[len(tc.args)-1])
			if err != nil {
				t.Fatal(err)
			}
			got = string(b)
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("report %v: %q lacks %q", tc.args, clip(got), tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "r.pdf")); err == nil {
		t.Error("r.pdf was written")
	}
}
