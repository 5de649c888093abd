package main

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of the report formats")

// fixtures are the committed results files the golden tests report: made
// with benchrig run on examples/suites and internal/report/testdata/suites
// (see internal/report/testdata/README.md).
const fixtures = "../../internal/report/testdata"

// goldenFormats are the report formats with golden files: the flag value
// and the golden file's extension.
var goldenFormats = []struct{ format, ext string }{
	{"text", "txt"}, {"md", "md"}, {"html", "html"}, {"csv", "csv"}, {"json", "json"},
}

// TestReportGolden reports each committed results file in every format and
// compares the output with its golden file byte for byte (go test
// -run TestReportGolden -update rewrites them): a closed-loop suite, a
// constant-rate suite with a target, a pg + RESP suite, a failing run with
// errors and a tampered file.
func TestReportGolden(t *testing.T) {
	for _, name := range []string{"closed", "rate", "pgresp", "failing", "tampered"} {
		for _, f := range goldenFormats {
			t.Run(name+"."+f.ext, func(t *testing.T) {
				file := filepath.Join(fixtures, "results", name+".json")
				out, errOut, code := invoke(t, "report", file, "-f", f.format)
				if code != 0 {
					t.Fatalf("report %s -f %s: exit %d: %s", file, f.format, code, errOut)
				}
				golden := filepath.Join(fixtures, "golden", name+"."+f.ext)
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./cmd/benchrig -run TestReportGolden -update)", err)
				}
				if out != string(want) {
					t.Errorf("report %s -f %s differs from %s (-update rewrites it):\n%s", file, f.format, golden, firstDiff(string(want), out))
				}
				if len(out) > 200<<10 {
					t.Errorf("%s is %d KiB: keep golden files under 200 KiB", golden, len(out)>>10)
				}
			})
		}
	}
}

// firstDiff shows the first line where got differs from want.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n  want " + clip(a) + "\n  got  " + clip(b)
		}
	}
	return "(same lines, different bytes)"
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
