package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// faultSuite is a suite of 2 targets × 1 cell × 2 repeats whose targets
// are wrappers around the hello server, each a grandchild of benchrig that
// only the watchdog can reap on kill -9. wrap-a is `sh -c 'server & wait'`,
// and its version_command takes 200 ms and leaves a setsid grandchild
// (`sleep` of marker + "2"): the version step, which a kill may hit.
// wrap-b is a script that ignores its flags (given --version, it would
// start the server all the same), starts the server and leaves a setsid
// grandchild (marker + "1"); it is not run for a version.
func faultSuite(t *testing.T, dir, hello, marker string) string {
	t.Helper()
	wrapper := filepath.Join(dir, "wrapper.sh")
	script := fmt.Sprintf("#!/bin/sh\n# ignores every flag, --version too\n(setsid sleep %[1]s1 > /dev/null 2>&1 &)\n%[2]s -addr 127.0.0.1:$PORT &\nwait\n", marker, hello)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	suite := fmt.Sprintf(`name: faults
seed: 7
repeats: 2
sampler: {interval: 100ms}
phases: {baseline: 100ms, warmup: 100ms, settle: 0s, load: 300ms, recovery: 100ms}
targets:
  wrap-a:
    command: ["sh", "-c", "%[1]s -addr 127.0.0.1:{port} & wait"]
    version_command: ["sh", "-c", "(setsid sleep %[3]s2 > /dev/null 2>&1 &); sleep 0.2; echo v1"]
    ready: {http: "http://127.0.0.1:{port}/"}
  wrap-b:
    command: [%[2]q]
    env: {PORT: "{port}"}
    ready: {http: "http://127.0.0.1:{port}/"}
paths:
  hello: {http: {url: "http://127.0.0.1:{port}/"}}
matrix:
  targets: [wrap-a, wrap-b]
  paths: [hello]
  connections: [2]
`, hello, wrapper, marker)
	p := filepath.Join(dir, "faults.yaml")
	if err := os.WriteFile(p, []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// markedProcesses lists live processes whose command line contains marker
// (the hello binary's path, unique to this test: it matches the sh wrapper
// and the server it started alike).
func markedProcesses(marker string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) && !pidGoneStr(e.Name()) {
			out = append(out, e.Name()+":"+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// completeLines is the part of a results file up to its last newline: the
// lines a kill cannot tear.
func completeLines(b []byte) []byte {
	return b[:bytes.LastIndexByte(b, '\n')+1]
}

// TestFaultInjectionKill9: after a clean run of the suite (faultSuite) no
// process of its wrappers, servers, setsid grandchildren or version step is
// left, nor a temp dir; after a kill -9 during the version step, no process
// either. Then the suite is killed with SIGKILL at 10 moments drawn from a
// seeded PRNG over the run's duration (every moment is valid: in the
// version step, before the file exists, between samples, mid-sample), in
// two chains side by side, each kill its own run and file. After each kill
// the file verifies as INCOMPLETE or OK (never corrupt), --resume
// completes it keeping every finished line byte for byte, and verify says
// OK. At the end no process is left, and the test's own TMPDIR holds no
// temp dir.
func TestFaultInjectionKill9(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	if testing.Short() {
		t.Skip("fault injection builds benchrig and runs 11 suites")
	}
	dir := t.TempDir()
	br, tmp := buildBenchrig(t, dir)
	hello := buildExample(t, "hello")
	marker := fmt.Sprintf("300.%d0", os.Getpid()) // the setsid grandchildren's sleeps
	suite := faultSuite(t, dir, hello, marker)
	// left waits until no process of the suite is left, and returns those
	// left: the watchdog's kill is asynchronous to benchrig's death, and
	// the 30 s bound only catches a hang.
	left := func() []string {
		var l []string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if l = append(markedProcesses(hello), markedProcesses(marker)...); len(l) == 0 {
				break
			}
		}
		return l
	}
	t.Cleanup(func() {
		for _, p := range append(markedProcesses(hello), markedProcesses(marker)...) {
			var pid int
			fmt.Sscan(p, &pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	env := append(os.Environ(), "TMPDIR="+tmp)
	// benchrig runs br and returns its stdout (stderr after it, for the
	// failure messages: verdicts are matched at the start) and exit code.
	benchrig := func(args ...string) (string, int) {
		cmd := exec.Command(br, args...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, _ := cmd.Output()
		return string(out) + stderr.String(), cmd.ProcessState.ExitCode()
	}

	// one uninterrupted run gives the span the kill moments are spread over.
	start := time.Now()
	if out, code := benchrig("run", suite, "-o", filepath.Join(dir, "whole.json")); code != 0 {
		t.Fatalf("uninterrupted run: exit %d\n%s", code, out)
	}
	span := time.Since(start)
	if out, code := benchrig("verify", filepath.Join(dir, "whole.json")); code != 0 {
		t.Fatalf("verify of the uninterrupted run: exit %d\n%s", code, out)
	}
	if l := left(); len(l) > 0 {
		t.Errorf("%d processes left after a clean run: %v", len(l), l)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("%d temp dirs left after a clean run", len(entries))
	}

	// kill -9 in the version step: once its setsid grandchild runs.
	cmd := exec.Command(br, "run", suite, "-o", filepath.Join(dir, "version-kill.json"))
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(markedProcesses(marker+"2")) == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if len(markedProcesses(marker+"2")) == 0 {
		t.Errorf("the version step was never seen running")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if l := left(); len(l) > 0 {
		t.Errorf("%d processes left after kill -9 during the version step: %v", len(l), l)
	}

	// The 10 kills run in two chains side by side (kills 0, 2, 4… and
	// 1, 3, 5…), each kill its own run, file and resume, in one TMPDIR; the
	// moments are drawn in order from the seeded PRNG as before, and what
	// is left is checked once both chains are done.
	rng := rand.New(rand.NewPCG(16, 2026))
	var moments [10]time.Duration
	for i := range moments {
		moments[i] = time.Duration(rng.Int64N(int64(span)))
	}
	var chains sync.WaitGroup
	for first := range 2 {
		chains.Add(1)
		go func() {
			defer chains.Done()
			for i := first; i < len(moments); i += 2 {
				killAndResume(t, benchrig, br, env, suite, filepath.Join(dir, fmt.Sprintf("r%d.json", i)), i, moments[i], span)
			}
		}()
	}
	chains.Wait()

	l := left()
	t.Logf("leftover processes: %d", len(l))
	if len(l) > 0 {
		t.Errorf("%d wrapper, server or grandchild processes left after 10 kills: %v", len(l), l)
	}
	entries, _ := os.ReadDir(tmp)
	t.Logf("leftover temp dirs: %d", len(entries))
	for _, e := range entries {
		t.Errorf("left in the test's TMPDIR: %s", e.Name())
	}
}

// killAndResume is kill i of TestFaultInjectionKill9: the suite run by br
// into out is killed with SIGKILL at moment at (of the uninterrupted run's
// span); the file then verifies as INCOMPLETE or OK, --resume completes it
// keeping every finished line byte for byte, and verify says OK. benchrig
// runs br as the test does. It runs on a goroutine of its own: it reports
// with t.Errorf only.
func killAndResume(t *testing.T, benchrig func(args ...string) (string, int), br string, env []string, suite, out string, i int, at, span time.Duration) {
	cmd := exec.Command(br, "run", suite, "-o", out)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Errorf("kill %d: start: %v", i, err)
		return
	}
	time.Sleep(at)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	before, _ := os.ReadFile(out)
	kept := completeLines(before)
	t.Logf("kill %d at %v of %v: %d samples written", i, at.Round(time.Millisecond), span.Round(time.Millisecond), bytes.Count(kept, []byte(`{"type":"sample"`)))
	// killed before the header was whole, the file (absent, empty, or a
	// cut header) holds no sample: --resume starts afresh.
	resumeArgs := []string{"run", suite, "-o", out, "--resume"}
	if len(kept) > 0 {
		if text, code := benchrig("verify", out); !strings.HasPrefix(text, "INCOMPLETE (not corrupt)") && !(code == 0 && strings.HasPrefix(text, "OK")) {
			t.Errorf("kill %d at %v: verify after the kill: exit %d\n%s", i, at, code, text)
		}
	}
	if strings.Contains(string(before), `"type":"footer"`) {
		return // the run had finished: nothing to resume
	}
	if text, code := benchrig(resumeArgs...); code != 0 {
		t.Errorf("kill %d at %v: %v: exit %d\n%s", i, at, resumeArgs[4:], code, text)
		return
	}
	after, _ := os.ReadFile(out)
	if !bytes.HasPrefix(after, kept) {
		t.Errorf("kill %d at %v: the resumed file does not keep the %d bytes of finished lines", i, at, len(kept))
	}
	if n := sampleLines(out); n != 4 {
		t.Errorf("kill %d at %v: %d samples after resume, want 4", i, at, n)
	}
	if text, code := benchrig("verify", out); code != 0 || !strings.HasPrefix(text, "OK") {
		t.Errorf("kill %d at %v: verify after resume: exit %d\n%s", i, at, code, text)
	}
}
