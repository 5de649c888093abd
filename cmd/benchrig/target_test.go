package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/testenv"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func pidGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// a zombie left for init to reap is gone for our purposes
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] == "Z"
}

// short phases so the tests stay quick; the defaults are seed 002's.
var shortPhases = []string{"--baseline", "500ms", "--warmup", "500ms", "--settle", "300ms", "--recovery", "700ms", "--sample-interval", "200ms"}

// TestTargetNodeMeasured starts Node fresh, checks its response, runs the
// phases at 1,000 req/s, reports server and client figures, stops Node and
// leaves no node process behind.
func TestTargetNodeMeasured(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	node := testenv.LookPath(t, testenv.Node, "node")
	port := freePort(t)
	args := append([]string{"http", fmt.Sprintf("http://127.0.0.1:%d/", port),
		"--target", node + " ../../examples/servers/node-http/server.js", "-R", "1000", "-d", "3s"}, shortPhases...)
	doc, stderr, code := quickJSON(t, args...)
	s := doc.Sample
	// this test is about the server's figures, not its latency: a busy
	// machine may make the verdict UNHEALTHY on latency or coverage only
	if code != 0 {
		t.Fatalf("exit %d, verdict %+v: %s", code, s.Verdict, stderr)
	}
	healthyButForLoad(t, "node", s.Verdict)
	if s.Server == nil || s.Target == nil || s.Target.PID == 0 {
		t.Fatalf("no server figures or target: %+v", s.Target)
	}
	f := s.Server.Figures
	if f.CPUSeconds <= 0 || f.Cores <= 0 || f.MicrosPerRequest <= 0 || f.RSSBaseline == 0 || f.RSSLoad == 0 || f.RSSAfter == 0 {
		t.Errorf("server figures incomplete: %+v", f)
	}
	phases := map[string]bool{}
	for _, smp := range s.Server.Samples {
		phases[smp.Phase] = true
	}
	for _, p := range []string{"baseline", "warmup", "settle", "load", "recovery"} {
		if !phases[p] {
			t.Errorf("no sample stamped %q (have %v)", p, phases)
		}
	}
	if !pidGone(s.Target.PID) {
		t.Errorf("node (pid %d) still running after the run", s.Target.PID)
	}
	if s.Load.Client.Cores <= 0 {
		t.Errorf("client cores %v", s.Load.Client.Cores)
	}
}

// TestTargetCrashMidLoad: a target that exits mid-load gives an UNHEALTHY
// result with its exit status and log tail, benchrig exits cleanly, and a
// second run works.
func TestTargetCrashMidLoad(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	bin := buildExample(t, "stall")
	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	cmd := fmt.Sprintf("%s -addr 127.0.0.1:%d -delay 0 -exit-after 800", bin, port)
	args := append([]string{"http", url, "--target", cmd, "-R", "500", "-d", "4s"}, shortPhases...)
	doc, _, code := quickJSON(t, args...)
	s := doc.Sample
	if code != 0 {
		t.Errorf("exit %d: a sample cut short by its target's death is UNHEALTHY, not an interrupted run", code)
	}
	if s.Verdict.Healthy || s.Target == nil || s.Target.ExitStatus != "exit status 1" || s.Target.LogTail == "" {
		t.Fatalf("verdict %+v target %+v", s.Verdict, s.Target)
	}
	if !strings.Contains(strings.Join(s.Verdict.Reasons, "\n"), "target exited during load") {
		t.Errorf("reasons %v do not name the exit", s.Verdict.Reasons)
	}
	// the second run, against a target that does not crash, is healthy.
	cmd = fmt.Sprintf("%s -addr 127.0.0.1:%d -delay 0", bin, port)
	args = append([]string{"http", url, "--target", cmd, "-R", "200", "-d", "1s"}, shortPhases...)
	doc, stderr, code := quickJSON(t, args...)
	if code != 0 {
		t.Errorf("second run: exit %d %+v %s", code, doc.Sample.Verdict, stderr)
	}
	healthyButForLoad(t, "second run", doc.Sample.Verdict)
}

// TestTargetBadInput: a command that does not exist, a port never opened
// within the start timeout, a failing response check: one-line errors
// naming the target and quoting the end of its log (not its path: the run
// removes the file); nothing left running.
func TestTargetBadInput(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	bin := buildExample(t, "stall")
	// a server that answers 500: the pre-check fails.
	bad := httpServerStatus(t, 500)
	cases := []struct {
		args []string
		code int
		msg  []string
	}{
		{[]string{"http", url, "--target", "no-such-command-x", "-d", "1s"}, 1, []string{`target "no-such-command-x"`, "executable file not found"}},
		{[]string{"http", url, "--target", "sleep 20", "--start-timeout", "1s", "-d", "1s"}, 1, []string{`target "sleep"`, "not ready after 1s", "the target's log is empty"}},
		{[]string{"http", bad, "--target", fmt.Sprintf("%s -addr 127.0.0.1:%d", bin, port), "-d", "1s"}, 1, []string{"no-op"}},
		{[]string{"http", url, "--target", "x", "--attach-pid", "1"}, 2, []string{"one of --target"}},
		{[]string{"http", url, "--target", "'unterminated"}, 2, []string{"unterminated"}},
		{[]string{"http", url, "--attach-pid", "999999999", "-d", "1s"}, 1, []string{"no such process"}},
		{[]string{"http", url, "--target", "", "-d", "1s"}, 2, []string{"--target is empty"}},
		{[]string{"http", url, "--target=  ", "-d", "1s"}, 2, []string{"--target is empty"}},
		{[]string{"http", url, "--attach-pid", "1", "-d", "1s"}, 1, []string{"attach to pid 1", "benchrig itself runs in its process tree"}},
		{[]string{"http", url, "--client-cpus", "x"}, 2, []string{"--client-cpus"}},
	}
	for i, c := range cases {
		if i == 2 {
			// the probe of the managed target is its own URL; the
			// pre-check runs against the URL given, which answers 500.
			continue
		}
		_, stderr, code := invoke(t, c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, c.code, stderr)
		}
		for _, m := range c.msg {
			if !strings.Contains(stderr, m) {
				t.Errorf("%v: stderr %q lacks %q", c.args, stderr, m)
			}
		}
		if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 1 {
			t.Errorf("%v: error is %d lines", c.args, n+1)
		}
	}
	// a target whose response fails the check: the pre-check aborts.
	port2 := freePort(t)
	url2 := fmt.Sprintf("http://127.0.0.1:%d/", port2)
	_, stderr, code := invoke(t, "http", url2, "--target", fmt.Sprintf("%s -addr 127.0.0.1:%d", bin, port2), "--expect-status", "201", "-d", "1s")
	if code != 1 || !strings.Contains(stderr, "pre-check") || !strings.Contains(stderr, "status 200") || !strings.Contains(stderr, "the target's log ends: \"listening on 127.0.0.1:") {
		t.Errorf("failing pre-check: exit %d %q", code, stderr)
	}
}

func httpServerStatus(t *testing.T, status int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(c, "HTTP/1.1 %d X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status)
			c.Close()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

// TestInterruptStopsTarget sends SIGINT to a real benchrig process in the
// middle of the load: the target is stopped, the partial figures printed,
// the results file left resumable (interrupted footer, the sample in flight
// not counted as done), no process and no temp dir left behind.
func TestInterruptStopsTarget(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	dir := t.TempDir()
	br := linkBuild(t, ".", dir, "benchrig")
	stall := buildExample(t, "stall")
	port := freePort(t)
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o755)
	out := filepath.Join(dir, "partial.json")
	var cmd *exec.Cmd
	var stdout bytes.Buffer
	// Into the load phase: 4 s is past the start, the floor's measurement,
	// the baseline, warm-up and settle on a quiet machine; on a busy one
	// the signal may land before the load, and the run is made again with
	// twice the wait.
	for wait := 4 * time.Second; ; wait *= 2 {
		os.Remove(out)
		cmd = exec.Command(br, append([]string{"http", fmt.Sprintf("http://127.0.0.1:%d/", port),
			"--target", fmt.Sprintf("%s -addr 127.0.0.1:%d -delay 1ms", stall, port), "-R", "300", "-d", "30s", "-o", out}, shortPhases...)...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		stdout.Reset()
		cmd.Stdout = &stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(wait)
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatal("benchrig did not exit after SIGINT")
		}
		early := regexp.MustCompile(`interrupted during (baseline|warmup|settle)\b`).FindString(stdout.String())
		if early == "" || wait >= 16*time.Second {
			break
		}
		t.Logf("SIGINT after %s landed before the load (%s); again with %s", wait, early, 2*wait)
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit code %d after SIGINT, want 1", code)
	}
	doc := readResults(t, out)
	if doc.Footer == nil || !doc.Footer.Interrupted || len(doc.Samples) != 0 {
		t.Fatalf("results file: footer %+v, %d samples; want an interrupted, resumable file", doc.Footer, len(doc.Samples))
	}
	if !strings.Contains(stdout.String(), "requests in") {
		t.Errorf("the partial figures were not printed:\n%s", stdout.String())
	}
	if pids := pidsRunning(stall); len(pids) > 0 {
		t.Errorf("target still running: pids %v", pids)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("temp dir left behind: %v", entries)
	}
}

// TestAttachAndClientPinning measures a server benchrig did not start (by
// PID, then by port), with the load generation pinned to CPU 0: the server
// is sampled, not stopped, and the placement is recorded.
func TestAttachAndClientPinning(t *testing.T) {
	bin := buildExample(t, "hello")
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	addr := startListening(t, cmd)
	_, port, _ := net.SplitHostPort(addr)
	// The second run also turns PSS off: RSS only, the PSS figures missing.
	for i, how := range [][]string{{"--attach-pid", fmt.Sprint(cmd.Process.Pid)}, {"--attach-port", port, "--no-pss"}} {
		args := append([]string{"http", "http://" + addr + "/", "-d", "1s", "--client-cpus", "0",
			"--baseline", "300ms", "--settle", "0s", "--recovery", "300ms", "--sample-interval", "100ms"}, how...)
		doc, stderr, code := quickJSON(t, args...)
		s := doc.Sample
		if code != 0 || s.Server == nil || s.Target == nil {
			t.Fatalf("%v: exit %d %s", how, code, stderr)
		}
		if s.Target.Kind != "attach" || s.Target.PID != cmd.Process.Pid {
			t.Errorf("%v: target %+v, want the attached pid %d", how, s.Target, cmd.Process.Pid)
		}
		if s.Server.Figures.CPUSeconds <= 0 || s.Server.Figures.RSSLoad == 0 {
			t.Errorf("%v: server not sampled: %+v", how, s.Server.Figures)
		}
		if noPSS := i == 1; (s.Server.Figures.PSSPeak == 0) != noPSS || slices.Contains(s.Server.Figures.Missing, "pss_peak_bytes") != noPSS {
			t.Errorf("%v: PSS peak %d, missing %v", how, s.Server.Figures.PSSPeak, s.Server.Figures.Missing)
		}
		if s.Server.Placement == nil || s.Server.Placement.ClientCPUs != "0" || s.Load.Client.UsableCores != 1 {
			t.Errorf("%v: placement %+v, usable cores %d", how, s.Server.Placement, s.Load.Client.UsableCores)
		}
		if pidGone(cmd.Process.Pid) {
			t.Fatalf("%v: the attached server was stopped", how)
		}
	}
}

// pidsRunning lists the live processes whose argv[0] is bin.
func pidsRunning(bin string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.HasPrefix(b, []byte(bin+"\x00")) || pidGone(pid) {
			continue
		}
		out = append(out, pid)
	}
	return out
}
