package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFailedSampleQuotesItsLog: the errors of failed suite samples used to
// name a log file in the run's temp dir, removed when the run ends. Now a
// target that exits before ready, and one whose pre-check fails, have the
// end of their log in the error and in the sample's log_tail, and no error
// names a file that is gone.
func TestFailedSampleQuotesItsLog(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	hello := buildExample(t, "hello")
	src := fmt.Sprintf(`name: failing-logs
repeats: 1
phases: {load: 300ms}
targets:
  dies:
    command: ["sh", "-c", "echo boom-marker-7 >&2; exit 3"]
    ready: {http: "http://127.0.0.1:{port}/"}
  wrong:
    command: [%q, "-addr", "127.0.0.1:{port}"]
    ready: {http: "http://127.0.0.1:{port}/"}
    checks: [{url: "http://127.0.0.1:{port}/", status: 201}]
paths:
  p: {http: {url: "http://127.0.0.1:{port}/"}}
matrix:
  targets: [dies, wrong]
  paths: [p]
  connections: [1]
`, hello)
	suiteFile := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(suiteFile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	_, stderr, code := invoke(t, "run", suiteFile, "-o", out)
	if code != 1 || !strings.Contains(stderr, "boom-marker-7") {
		t.Errorf("run: exit %d, want 1 quoting the log: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"dies": `last output: "boom-marker-7"`, "wrong": `the target's log ends: "listening on 127.0.0.1:`}
	paths := regexp.MustCompile(`/[^ ")]*\.log`)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var s struct {
			Type, Cell, Error string
			Target            struct {
				LogTail string `json:"log_tail"`
			}
		}
		if err := json.Unmarshal([]byte(line), &s); err != nil || s.Type != "sample" {
			continue
		}
		name, _, _ := strings.Cut(s.Cell, "/")
		if !strings.Contains(s.Error, want[name]) || s.Target.LogTail == "" {
			t.Errorf("%s: error %q, log tail %q: want %q and the tail", name, s.Error, s.Target.LogTail, want[name])
		}
		for _, p := range paths.FindAllString(s.Error, -1) {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: the error names %s, which the run removed", name, p)
			}
		}
		delete(want, name)
	}
	if len(want) > 0 {
		t.Errorf("no sample of %v", want)
	}
}
