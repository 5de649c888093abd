package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunExitCodes: the README's exit codes for `run`, decided after the
// whole plan ran and the file is complete: 0 with a failed sample among good
// ones (named on stderr), 3 for the same with --fail-unhealthy, 1 when every
// sample failed.
func TestRunExitCodes(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	hello := buildExample(t, "hello")
	dir := t.TempDir()
	write := func(name, targets string) string {
		src := fmt.Sprintf("name: codes\nrepeats: 1\nphases: {load: 300ms}\ntargets:\n%s\npaths:\n  p: {http: {url: \"http://127.0.0.1:{port}/\"}}\nmatrix:\n  targets: [%s]\n  paths: [p]\n  connections: [2]\n",
			targets, strings.Join(targetNames(targets), ", "))
		f := filepath.Join(dir, name)
		os.WriteFile(f, []byte(src), 0o644)
		return f
	}
	good := fmt.Sprintf("  good: {command: [%q, -addr, \"127.0.0.1:{port}\"]}", hello)
	bad := "  bad: {command: [\"false\"], ready: {timeout: 2s}}"
	mixed, allBad := write("mixed.yaml", good+"\n"+bad), write("bad.yaml", bad)
	for _, c := range []struct {
		suite string
		flags []string
		code  int
		want  string
	}{
		{mixed, nil, 0, "1 of 2 samples failed (exit 0; --fail-unhealthy exits 3)"},
		{mixed, []string{"--fail-unhealthy"}, 3, "1 of 2 samples UNHEALTHY, 1 of them failed"},
		{allBad, nil, 1, "start target"},
	} {
		out := filepath.Join(t.TempDir(), "r.json")
		_, stderr, code := invoke(t, append([]string{"run", c.suite, "-o", out}, c.flags...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%s %v: exit %d, stderr %q; want %d and %q", filepath.Base(c.suite), c.flags, code, stderr, c.code, c.want)
		}
		if doc := readResults(t, out); doc.Footer == nil || doc.Footer.Interrupted {
			t.Errorf("%s: the file is not complete: footer %+v", filepath.Base(c.suite), doc.Footer)
		}
	}
}

// targetNames lists the names of "  name: {…}" lines.
func targetNames(targets string) []string {
	var out []string
	for _, l := range strings.Split(targets, "\n") {
		if name, _, ok := strings.Cut(strings.TrimSpace(l), ":"); ok {
			out = append(out, name)
		}
	}
	return out
}

// TestResumeChecksProvenance: a partial results file is resumed only
// against the targets it was measured with; a replaced target binary is
// refused (naming the change) unless --resume-changed.
func TestResumeChecksProvenance(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	dir := t.TempDir()
	bin := filepath.Join(dir, "server")
	copyFile(t, buildExample(t, "hello"), bin)
	suiteFile := filepath.Join(dir, "s.yaml")
	os.WriteFile(suiteFile, []byte(fmt.Sprintf("name: resume\nrepeats: 2\nphases: {load: 300ms}\ntargets:\n  web: {command: [%q, -addr, \"127.0.0.1:{port}\"]}\npaths:\n  p: {http: {url: \"http://127.0.0.1:{port}/\"}}\nmatrix: {targets: [web], paths: [p], connections: [2]}\n", bin)), 0o644)
	out := filepath.Join(dir, "r.json")
	if _, stderr, code := invoke(t, "run", suiteFile, "-o", out); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	// Keep the header and the first sample: an interrupted file.
	b, _ := os.ReadFile(out)
	lines := strings.SplitAfter(string(b), "\n")
	os.WriteFile(out, []byte(lines[0]+lines[1]), 0o644)
	copyFile(t, buildExample(t, "stall"), bin)
	_, stderr, code := invoke(t, "run", suiteFile, "-o", out, "--resume")
	if code != 1 || !strings.Contains(stderr, "refusing to resume") || !strings.Contains(stderr, `target "web": binary sha256`) {
		t.Fatalf("resume against a replaced binary: exit %d, %s", code, stderr)
	}
	if _, stderr, code := invoke(t, "run", suiteFile, "-o", out, "--resume-changed"); code != 0 || !strings.Contains(stderr, "resuming against changed targets") {
		t.Fatalf("--resume-changed: exit %d, %s", code, stderr)
	}
	if doc := readResults(t, out); len(doc.Samples) != 2 || doc.Footer == nil {
		t.Errorf("after --resume-changed: %d samples, footer %+v", len(doc.Samples), doc.Footer)
	}
	// What was resumed against is in the file: verify and every report say so.
	stdout, _, code := invoke(t, "verify", out)
	if code != 0 || !strings.Contains(stdout, "1 of 2 samples were measured after --resume-changed against changed targets") || !strings.Contains(stdout, `target "web": binary sha256`) {
		t.Errorf("verify after --resume-changed: exit %d: %s", code, stdout)
	}
	for _, f := range []string{"text", "md", "html"} {
		stdout, stderr, code := invoke(t, "report", out, "-f", f)
		if code != 0 || !strings.Contains(stdout, "measured after --resume-changed") {
			t.Errorf("report -f %s: exit %d, %s; no --resume-changed note in:\n%.2000s", f, code, stderr, stdout)
		}
	}
}

// copyFile copies the program from to to (a new file, written by a child
// process: writeExecutable).
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(to)
	writeExecutable(t, to, b)
}

// TestTargetDiesMidSampleExitCodes: a target that dies mid-sample cuts its
// load window short; the sample is recorded UNHEALTHY, the plan runs to its
// end and the file is complete (verify OK). That is not an interrupted run:
// the exit status is 0 (the cut samples named on stderr), or 3 with
// --fail-unhealthy, as the README's table says; never 1.
func TestTargetDiesMidSampleExitCodes(t *testing.T) {
	stall := buildExample(t, "stall")
	dir := t.TempDir()
	suiteFile := filepath.Join(dir, "dies.yaml")
	os.WriteFile(suiteFile, []byte(fmt.Sprintf(`name: dies
repeats: 2
phases: {baseline: 0s, warmup: 0s, settle: 0s, load: 2s, recovery: 0s}
targets:
  dies:
    command: [%q, -addr, "127.0.0.1:{port}", -delay, 1ms, -exit-after, "200"]
    ready: {http: "http://127.0.0.1:{port}/"}
paths:
  p: {http: {url: "http://127.0.0.1:{port}/"}}
matrix: {targets: [dies], paths: [p], connections: [2]}
`, stall)), 0o644)
	for _, c := range []struct {
		flags []string
		code  int
		want  string
	}{
		{nil, 0, "2 of 2 samples UNHEALTHY with their load window cut short (exit 0; --fail-unhealthy exits 3)"},
		{[]string{"--fail-unhealthy"}, 3, "the run was UNHEALTHY: 2 of 2 samples"},
	} {
		out := filepath.Join(t.TempDir(), "r.json")
		_, stderr, code := invoke(t, append([]string{"run", suiteFile, "-o", out, "--no-calibrate"}, c.flags...)...)
		if code != c.code || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "interrupted:") {
			t.Errorf("run %v: exit %d, want %d and %q:\n%s", c.flags, code, c.code, c.want, stderr)
		}
		doc := readResults(t, out)
		if doc.Footer == nil || doc.Footer.Interrupted || len(doc.Samples) != 2 {
			t.Fatalf("run %v: the file is not complete: %d samples, footer %+v", c.flags, len(doc.Samples), doc.Footer)
		}
		for _, s := range doc.Samples {
			if s.Verdict.Healthy || s.Load == nil || !s.Load.Interrupted || !strings.Contains(strings.Join(s.Verdict.Reasons, "\n"), "target exited during load") {
				t.Errorf("sample %s: verdict %+v, want UNHEALTHY with the target's exit", s.Key, s.Verdict)
			}
		}
		if vout, _, code := invoke(t, "verify", out); code != 0 {
			t.Errorf("verify: exit %d\n%s", code, vout)
		}
	}
}
