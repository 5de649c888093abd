package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/system"
)

// TestResumeSeesBehindWrapper: a target whose command is a wrapper script
// that execs the server. A run is cut after its first sample (the file
// kept up to it, as a kill leaves it); the server is rebuilt behind the
// unchanged wrapper; --resume refuses, naming the server and both
// SHA-256s, and writes nothing; --resume-changed resumes, each new sample
// saying what changed; with the first build back, --resume goes on
// without a word. Every sample records the server's SHA-256 in
// target.ran.
func TestResumeSeesBehindWrapper(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	dir := t.TempDir()
	hello := buildExample(t, "hello")
	server := filepath.Join(dir, "server")
	install := func(extra string) { // a "build": a new file, renamed over
		b, err := os.ReadFile(hello)
		if err != nil {
			t.Fatal(err)
		}
		writeExecutable(t, server+".new", append(b, extra...))
		if err := os.Rename(server+".new", server); err != nil {
			t.Fatal(err)
		}
	}
	install("")
	first := fileDigest(t, server)
	wrap := filepath.Join(dir, "wrap.sh")
	writeExecutable(t, wrap, []byte("#!/bin/sh\nexec "+server+" -addr 127.0.0.1:$PORT\n"))
	suite := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(suite, []byte(fmt.Sprintf(`name: wrapped
repeats: 3
sampler: {interval: 100ms}
phases: {baseline: 100ms, settle: 0s, load: 300ms, recovery: 100ms}
targets:
  api:
    command: [%q]
    env: {PORT: "{port}"}
paths:
  get: {http: {url: "http://127.0.0.1:{port}/"}}
matrix: {targets: [api], paths: [get], connections: [2]}
`, wrap)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	if _, stderr, code := invoke(t, "run", suite, "-o", out, "--no-calibrate"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	whole, _ := os.ReadFile(out)
	lines := bytes.SplitAfter(whole, []byte("\n"))
	cut := bytes.Join(lines[:2], nil) // the header and the first sample
	doc := readResults(t, out)
	for _, s := range doc.Samples {
		if s.Target == nil || len(s.Target.Ran) != 1 || s.Target.Ran[0].Path != server || s.Target.Ran[0].SHA256 != first {
			t.Fatalf("sample %s: target.ran %+v, want the server's SHA-256 %s alone", s.Key, s.Target, first)
		}
	}

	os.WriteFile(out, cut, 0o644)
	install("rebuilt")
	second := fileDigest(t, server)
	_, stderr, code := invoke(t, "run", suite, "-o", out, "--resume")
	if code == 0 || !strings.Contains(stderr, "refusing to resume") || !strings.Contains(stderr, "exe "+server+" sha256 "+first[:12]+"… → "+second[:12]+"…") {
		t.Errorf("resume against the rebuilt server: exit %d, want a refusal naming it:\n%s", code, stderr)
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(after, cut) {
		t.Errorf("the refused resume changed the file")
	}

	_, stderr, code = invoke(t, "run", suite, "-o", out, "--resume-changed")
	if code != 0 || !strings.Contains(stderr, "resuming against changed targets") {
		t.Fatalf("--resume-changed: exit %d\n%s", code, stderr)
	}
	doc = readResults(t, out)
	for i, s := range doc.Samples {
		changed := strings.Join(s.ResumedChanged, "\n")
		if i == 0 && changed != "" || i > 0 && !strings.Contains(changed, "exe "+server) {
			t.Errorf("sample %d: resumed_changed %q", i, changed)
		}
	}

	os.WriteFile(out, cut, 0o644)
	install("")
	if _, stderr, code := invoke(t, "run", suite, "-o", out, "--resume"); code != 0 || strings.Contains(stderr, "changed") {
		t.Errorf("resume against the first build again: exit %d\n%s", code, stderr)
	}
	if n := sampleLines(out); n != 3 {
		t.Errorf("%d samples after the resume, want 3", n)
	}
}

// fileDigest is the hex SHA-256 of a file.
func fileDigest(t *testing.T, path string) string {
	t.Helper()
	sum, err := system.FileSHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}
