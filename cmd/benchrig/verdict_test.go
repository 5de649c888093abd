package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/reportsrc"
)

// TestReportStartsWithVerdict: the terminal report of a file that does not
// verify (a tampered copy of a committed results file, a partial one)
// starts with the verdict, before any figure; that of a file that verifies
// starts with its title. checksum refuses the files that do not verify and
// writes no .sha256 for them.
func TestReportStartsWithVerdict(t *testing.T) {
	dir := t.TempDir()
	closed, err := os.ReadFile(filepath.Join(fixtures, "results", "closed.json"))
	if err != nil {
		t.Fatal(err)
	}
	tampered := []byte(strings.Replace(string(closed), `"sent":`, `"sent":1`, 1))
	if string(tampered) == string(closed) {
		t.Fatal("closed.json has no sent count to tamper with")
	}
	lines := strings.SplitAfter(string(closed), "\n")
	partial := strings.Join(lines[:len(lines)-2], "") // no footer
	files := map[string]struct {
		body, first string // first line of the report, "" for the title
	}{
		"ok.json":       {string(closed), ""},
		"tampered.json": {string(tampered), "FAILED verification: "},
		"partial.json":  {partial, "INCOMPLETE (not corrupt): "},
	}
	for name, f := range files {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte(f.body), 0o644); err != nil {
				t.Fatal(err)
			}
			want := f.first + path
			if f.first == "" {
				want = "http-demo · " + path
			}
			out, errOut, code := invoke(t, "report", path)
			if code != 0 || !strings.HasPrefix(out, want) {
				t.Errorf("report: exit %d, want it to start with %q:\n%.400s%s", code, want, out, errOut)
			}
			var b strings.Builder
			if err := reportsrc.ConsoleFile(path, false, &b); err != nil || !strings.HasPrefix(b.String(), want) {
				t.Errorf("end-of-run report: %v, want it to start with %q:\n%.400s", err, want, b.String())
			}
			_, errOut, code = invoke(t, "checksum", path)
			_, statErr := os.Stat(path + ".sha256")
			if f.first == "" {
				if code != 0 || statErr != nil {
					t.Errorf("checksum of a file that verifies: exit %d %s", code, errOut)
				}
				return
			}
			if code == 0 || !strings.Contains(errOut, "does not verify, so it gets no checksum") || !strings.Contains(errOut, f.first) || statErr == nil {
				t.Errorf("checksum of a file that does not verify: exit %d, .sha256 written: %v\n%s", code, statErr == nil, errOut)
			}
		})
	}
}
