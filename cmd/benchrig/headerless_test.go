package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeaderlessResultsFileIsAbsent: a full disk (or a kill) before the
// header was whole leaves an empty file, or a header cut before its
// newline. It holds no sample, so neither a plain re-run nor --resume may
// be blocked by it: both say so on stderr, replace it and exit 0, and the
// new file verifies. A file with other content is still refused.
func TestHeaderlessResultsFileIsAbsent(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	url := helloServer(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body string
		flags      []string
	}{
		{"empty, plain run", "", nil},
		{"empty, --resume", "", []string{"--resume"}},
		{"cut header, plain run", `{"type":"header","schema":"benchrig.res`, nil},
		{"cut header, --resume", `{"type":"header","schema":"benchrig.res`, []string{"--resume"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.NewReplacer(" ", "-", ",", "").Replace(tc.name)+".json")
			if err := os.WriteFile(out, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"http", url, "-c", "2", "-d", "300ms", "--no-calibrate", "-o", out}, tc.flags...)
			_, stderr, code := invoke(t, args...)
			if code != 0 || !strings.Contains(stderr, out+" holds no complete header line") || !strings.Contains(stderr, "treated as absent") {
				t.Fatalf("exit %d, want 0 and the file named as treated as absent:\n%s", code, stderr)
			}
			if vout, _, code := invoke(t, "verify", out); code != 0 || !strings.HasPrefix(vout, "OK") {
				t.Errorf("verify of the new file: exit %d\n%s", code, vout)
			}
		})
	}
	// benchrig run SUITE reads the suite file when the results file has
	// nothing to resume.
	suiteFile := filepath.Join(dir, "s.yaml")
	os.WriteFile(suiteFile, []byte(`name: headerless
repeats: 1
phases: {baseline: 0s, warmup: 0s, settle: 0s, load: 300ms, recovery: 0s}
targets: {web: {address: {}}}
paths: {p: {http: {url: "`+url+`"}}}
matrix: {targets: [web], paths: [p], connections: [2]}
`), 0o644)
	for _, flags := range [][]string{nil, {"--resume"}} {
		out := filepath.Join(dir, "run.json")
		os.WriteFile(out, nil, 0o644)
		_, stderr, code := invoke(t, append([]string{"run", suiteFile, "-o", out, "--no-calibrate"}, flags...)...)
		if code != 0 || !strings.Contains(stderr, "treated as absent") {
			t.Fatalf("run %v over an empty file: exit %d\n%s", flags, code, stderr)
		}
		if vout, _, code := invoke(t, "verify", out); code != 0 {
			t.Errorf("run %v: verify of the new file: exit %d\n%s", flags, code, vout)
		}
	}
	// --resume of a file that does not exist (a kill before it was made)
	// starts one.
	missing := filepath.Join(dir, "missing.json")
	if _, stderr, code := invoke(t, "http", url, "-c", "2", "-d", "300ms", "--no-calibrate", "-o", missing, "--resume"); code != 0 || !strings.Contains(stderr, "nothing to resume; a new run starts") {
		t.Errorf("--resume of a missing file: exit %d\n%s", code, stderr)
	}
	// a file with content that is not a cut header is not replaced.
	other := filepath.Join(dir, "notes.json")
	os.WriteFile(other, []byte("my notes\n"), 0o644)
	if _, stderr, code := invoke(t, "http", url, "-c", "2", "-d", "300ms", "--no-calibrate", "-o", other); code != 1 || !strings.Contains(stderr, "already exists") {
		t.Errorf("a file with other content: exit %d %s", code, stderr)
	}
	if b, _ := os.ReadFile(other); string(b) != "my notes\n" {
		t.Errorf("the file was changed: %q", b)
	}
}
