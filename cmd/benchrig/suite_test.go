package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func writeSuite(t *testing.T, dir, hello string) string {
	t.Helper()
	suite := fmt.Sprintf(`name: two-targets
seed: 3
repeats: 2
sampler: {interval: 200ms}
phases: {baseline: 200ms, warmup: 200ms, settle: 0s, load: 700ms, recovery: 200ms}
targets:
  hello-a:
    command: [%[1]q, "-addr", "127.0.0.1:{port}"]
    ready: {http: "http://127.0.0.1:{port}/"}
    checks: [{url: "http://127.0.0.1:{port}/", status: 200, body_equals: "hello\n"}]
  hello-b:
    command: [%[1]q, "-addr", "127.0.0.1:{port}"]
    env: {GOMAXPROCS: "1"}
paths:
  hello: {http: {url: "http://127.0.0.1:{port}/"}}
matrix:
  targets: [hello-a, hello-b]
  paths: [hello]
  connections: [2, 4]
`, hello)
	p := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(p, []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func sampleLines(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte(`{"type":"sample"`))
}

// helloProcesses lists running processes whose executable is bin.
func helloProcesses(bin string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && exe == bin && !pidGoneStr(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// helloLeft waits up to bound for every process whose executable is bin
// to be gone, and returns those still running.
func helloLeft(bin string, bound time.Duration) []string {
	left := helloProcesses(bin)
	for deadline := time.Now().Add(bound); len(left) > 0 && time.Now().Before(deadline); left = helloProcesses(bin) {
		time.Sleep(50 * time.Millisecond)
	}
	return left
}

func pidGoneStr(pid string) bool {
	var n int
	fmt.Sscan(pid, &n)
	return pidGone(n)
}

// TestSuiteKillResumeVerify: a suite of 2 targets × 2 connection counts × 2
// repeats; benchrig is killed with SIGKILL in the middle: the file holds
// every finished sample, verify calls it incomplete (not corrupt), no target
// is left running, --resume completes it and verify says OK.
func TestSuiteKillResumeVerify(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	dir := t.TempDir()
	br := linkBuild(t, ".", dir, "benchrig")
	hello := buildExample(t, "hello")
	suite := writeSuite(t, dir, hello)
	out := filepath.Join(dir, "results.json")

	_, stderr, code := invoke(t, "plan", suite)
	if code != 0 {
		t.Fatalf("plan: %d %s", code, stderr)
	}
	cmd := exec.Command(br, "run", suite, "-o", out)
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for sampleLines(out) < 3 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	done := sampleLines(out)
	if done < 3 || done >= 8 {
		t.Fatalf("killed with %d samples written; want some but not all", done)
	}
	// The watchdog's kill is asynchronous to benchrig's death: wait for
	// it; the 30 s bound only catches a hang.
	if left := helloLeft(hello, 30*time.Second); len(left) > 0 {
		t.Errorf("target processes left after kill -9: %v", left)
	}

	stdout, _, code := invoke(t, "verify", out)
	if code != 1 || !strings.Contains(stdout, "INCOMPLETE (not corrupt)") {
		t.Errorf("verify of the partial file: exit %d\n%s", code, stdout)
	}
	// the resumed run sweeps what the killed one left in the temp dir (the
	// built benchrig, given the killed one's TMPDIR as the killed one was).
	resume := exec.Command(br, "run", suite, "-o", out, "--resume")
	resume.Env = cmd.Env
	var resumeOut, resumeErr bytes.Buffer
	resume.Stdout, resume.Stderr = &resumeOut, &resumeErr
	if err := resume.Run(); err != nil {
		t.Fatalf("resume: %v\n%s\n%s", err, resumeOut.String(), resumeErr.String())
	}
	if n := sampleLines(out); n != 8 {
		t.Errorf("after resume %d samples, want 8", n)
	}
	stdout, _, code = invoke(t, "verify", out)
	if code != 0 || !strings.HasPrefix(stdout, "OK") {
		t.Errorf("verify after resume: exit %d\n%s", code, stdout)
	}
	if left := helloProcesses(hello); len(left) > 0 {
		t.Errorf("target processes left after the run: %v", left)
	}
	checkReports(t, dir, out)
	// a complete file is never overwritten, and a flipped byte fails verify.
	if _, stderr, code := invoke(t, "run", suite, "-o", out); code != 1 || !strings.Contains(stderr, "refusing to overwrite") {
		t.Errorf("rerun over a complete file: exit %d %s", code, stderr)
	}
	b, _ := os.ReadFile(out)
	i := bytes.LastIndex(b, []byte(`"sent":`)) + len(`"sent":`)
	if b[i] == '9' { // one digit of a sample's count, still valid JSON
		b[i] = '8'
	} else {
		b[i]++
	}
	flipped := filepath.Join(dir, "flipped.json")
	os.WriteFile(flipped, b, 0o644)
	stdout, _, code = invoke(t, "verify", flipped)
	if code != 1 || !strings.Contains(stdout, "checksum mismatch") {
		t.Errorf("verify of a flipped byte: exit %d\n%s", code, stdout)
	}
	// a report of a changed file says so.
	if stdout, _, code := invoke(t, "report", flipped, "--format", "md"); code != 0 || !strings.Contains(stdout, "checksum mismatch") {
		t.Errorf("report of a flipped byte: exit %d, no checksum warning\n%s", code, stdout)
	}
	// the checksum file for publishing.
	if _, _, code := invoke(t, "checksum", out); code != 0 {
		t.Fatal("checksum failed")
	}
	if stdout, _, code := invoke(t, "checksum", "--check", out); code != 0 || !strings.Contains(stdout, "OK") {
		t.Errorf("checksum --check: %d %s", code, stdout)
	}
	// a smoke run: every cell once, marked as smoke, refused by verify and
	// report unless --allow-smoke.
	smoke := filepath.Join(dir, "smoke.json")
	if _, stderr, code := invoke(t, "run", suite, "-o", smoke, "--smoke"); code != 0 {
		t.Fatalf("smoke run: exit %d %s", code, stderr)
	}
	if n := sampleLines(smoke); n != 4 {
		t.Errorf("smoke run wrote %d samples, want one per cell (4)", n)
	}
	if stdout, _, code := invoke(t, "verify", smoke); code != 1 || !strings.Contains(stdout, "smoke results") {
		t.Errorf("verify of smoke results without --allow-smoke: exit %d %s", code, stdout)
	}
	if _, _, code := invoke(t, "verify", smoke, "--allow-smoke"); code != 0 {
		t.Errorf("verify --allow-smoke: exit %d", code)
	}
	if _, stderr, code := invoke(t, "report", smoke); code != 1 || !strings.Contains(stderr, "smoke results") {
		t.Errorf("report of smoke results: exit %d %s", code, stderr)
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, "benchrig-*")); len(entries) > 0 {
		t.Errorf("temp dirs left (the killed run's should have been swept): %v", entries)
	}
}

// checkReports renders a complete results file as Markdown and HTML and
// compares it with itself.
func checkReports(t *testing.T, dir, results string) {
	t.Helper()
	md, html := filepath.Join(dir, "report.md"), filepath.Join(dir, "report.html")
	for _, f := range []string{md, html} {
		if stdout, stderr, code := invoke(t, "report", results, "-o", f); code != 0 || !strings.Contains(stdout, "Report written to "+f) {
			t.Fatalf("report -o %s: exit %d %s %s", f, code, stdout, stderr)
		}
	}
	mdText, _ := os.ReadFile(md)
	for _, want := range []string{"# benchrig report · two-targets", "**Verified**: checksum, plan and sample consistency OK (8 of 8 planned samples)",
		"## Throughput", "| 2 conns |", "hello-a hello", "hello-b hello", "## Samples"} {
		if !bytes.Contains(mdText, []byte(want)) {
			t.Errorf("markdown report lacks %q", want)
		}
	}
	page, _ := os.ReadFile(html)
	if !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) || bytes.Count(page, []byte("<svg")) < 3 || bytes.Contains(page, []byte("https://")) {
		t.Errorf("html report: not a self-contained page with charts (%d bytes)", len(page))
	}
	// A file against itself: every difference is "~".
	stdout, stderr, code := invoke(t, "compare", results, results, "--format", "md")
	if code != 0 || !strings.Contains(stdout, "Mann–Whitney U") || strings.Contains(stdout, "% better") || strings.Contains(stdout, "% worse") {
		t.Errorf("compare of a file with itself: exit %d %s\n%s", code, stderr, stdout)
	}
	// Two variants of one file, case by case.
	stdout, stderr, code = invoke(t, "compare", results, "--a", "hello-a", "--b", "hello-b")
	if code != 0 || !strings.Contains(stdout, "│ 2 conns ") || !strings.Contains(stdout, "│ 4 conns ") || strings.Contains(stdout, "Only in") {
		t.Errorf("compare of two variants of one file: exit %d %s\n%s", code, stderr, stdout)
	}
	if _, stderr, code := invoke(t, "compare", results, "--a", "hello", "--b", "hello-b"); code != 2 || !strings.Contains(stderr, "names several variants") {
		t.Errorf("compare --a naming two variants: exit %d %s", code, stderr)
	}
	if _, stderr, code := invoke(t, "compare", results); code != 2 || !strings.Contains(stderr, "--a and --b") {
		t.Errorf("compare of one file without variants: exit %d %s", code, stderr)
	}
	if _, stderr, code := invoke(t, "compare", results, results, "--alpha", "2"); code != 2 || !strings.Contains(stderr, "--alpha") {
		t.Errorf("compare --alpha 2: exit %d %s", code, stderr)
	}
	if _, stderr, code := invoke(t, "report", results, "--format", "pdf"); code != 2 || !strings.Contains(stderr, "want text, md or html") {
		t.Errorf("report --format pdf: exit %d %s", code, stderr)
	}
	if _, stderr, code := invoke(t, "compare", results, filepath.Join(dir, "missing.json")); code != 1 || !strings.Contains(stderr, "missing.json") {
		t.Errorf("compare with a missing file: exit %d %s", code, stderr)
	}
}

// TestExampleSuitesPlan: every example suite parses and plans (they are
// documentation that must not rot).
//
// The examples' ./bin/hello (and bin/greeter-server) are relative to the
// directory benchrig runs in: from here (no bin/hello) plan refuses it as
// run would; from a directory that has them, plan accepts every example.
func TestExampleSuitesPlan(t *testing.T) {
	// (The seeds' suites, examples/seeds/00N, run from their own directory
	// in their smoke tests.)
	files, _ := filepath.Glob("../../examples/suites/*.yaml")
	if len(files) < 2 {
		t.Fatalf("example suites: %v", files)
	}
	demo, _ := filepath.Abs("../../examples/suites/http-demo.yaml")
	if _, stderr, code := invoke(t, "plan", demo); code != 2 || !strings.Contains(stderr, "program ./bin/hello: not found at ") {
		t.Errorf("plan with no ./bin/hello here: exit %d %s", code, stderr)
	}
	for i := range files {
		files[i], _ = filepath.Abs(files[i])
	}
	work := t.TempDir()
	os.Mkdir(filepath.Join(work, "bin"), 0o755)
	if err := os.Rename(buildExample(t, "hello"), filepath.Join(work, "bin", "hello")); err != nil {
		t.Fatal(err)
	}
	// grpc-vs-json.yaml's bin/greeter-server: a link to the binary the
	// test process shares (built once), not a move of it.
	greeter, _ := greeterServer(t)
	if err := os.Symlink(greeter, filepath.Join(work, "bin", "greeter-server")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	for _, f := range files {
		stdout, stderr, code := invoke(t, "plan", f)
		if code != 0 || !strings.HasPrefix(stdout, "plan ") {
			t.Errorf("plan %s: exit %d %s", f, code, stderr)
		}
	}
}
