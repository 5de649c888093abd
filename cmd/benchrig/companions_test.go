package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/benchrig/benchrig/internal/result"
)

// startHello starts examples/servers/hello on a free port as a process of
// its own (not a child benchrig knows of) and returns it and its port.
func startHello(t *testing.T, bin string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	_, port, _ := strings.Cut(startListening(t, cmd), ":")
	return cmd, port
}

// TestCompanionsByPIDAndPort: an address target (not sampled itself) with
// two companions, one found by the port it listens on (the server the
// requests go to: its CPU grows with them) and one by PID (an idle
// process). Both are sampled as their own trees through every phase and
// recorded under their names; the one by port is the headline, so the
// report's server figures are its own; the text report names both.
func TestCompanionsByPIDAndPort(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	bin := buildExample(t, "hello")
	served, port := startHello(t, bin)
	idle, _ := startHello(t, bin)
	dir := t.TempDir()
	suiteFile := filepath.Join(dir, "s.yaml")
	src := fmt.Sprintf(`name: companions
repeats: 1
sampler: {interval: 100ms}
phases: {baseline: 300ms, warmup: 300ms, load: 1s, recovery: 300ms}
targets:
  web:
    address: {addr: "127.0.0.1:%[1]s"}
    companions:
      - {name: server, port: %[1]s}
      - {name: bystander, pid: %[2]d}
    headline: server
paths:
  hello: {http: {url: "http://127.0.0.1:%[1]s/"}}
matrix:
  cases: [{target: web, path: hello}]
  connections: [4]
`, port, idle.Process.Pid)
	if err := os.WriteFile(suiteFile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "r.json")
	out, stderr, code := invoke(t, "run", suiteFile, "-o", res)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	doc := readResults(t, res)
	if len(doc.Samples) != 1 {
		t.Fatalf("%d samples, want 1", len(doc.Samples))
	}
	s := doc.Samples[0]
	healthyButForLoad(t, "sample", s.Verdict)
	if s.Load == nil || s.Load.Requests == 0 {
		t.Fatalf("sample: load %+v", s.Load)
	}
	if len(s.Companions) != 2 {
		t.Fatalf("companions %+v, want server and bystander", s.Companions)
	}
	byName := map[string]result.Companion{}
	for _, c := range s.Companions {
		byName[c.Name] = c
	}
	srv, by := byName["server"], byName["bystander"]
	if srv.Role != result.RoleHeadline || by.Role != result.RoleCompanion {
		t.Errorf("roles: server %q, bystander %q; want headline, companion", srv.Role, by.Role)
	}
	if srv.Target == nil || srv.Target.PID != served.Process.Pid || by.Target == nil || by.Target.PID != idle.Process.Pid {
		t.Errorf("sampled PIDs: server %+v (want %d), bystander %+v (want %d)", srv.Target, served.Process.Pid, by.Target, idle.Process.Pid)
	}
	for _, c := range []result.Companion{srv, by} {
		if c.Server == nil || len(c.Server.Samples) < 4 || c.Server.Figures.WindowSeconds == 0 || c.Server.Figures.RSSPeak == 0 {
			t.Fatalf("%s: not sampled through the phases: %+v", c.Name, c.Server)
		}
		phases := map[string]bool{}
		for _, r := range c.Server.Samples {
			phases[r.Phase] = true
		}
		for _, p := range []string{"baseline", "warmup", "load", "recovery"} {
			if !phases[p] {
				t.Errorf("%s: no resource sample in phase %s (%v)", c.Name, p, phases)
			}
		}
	}
	// The server answered every request: its CPU grew; the bystander's
	// is its own (an idle process), not the server's.
	if srv.Server.Figures.CPUSeconds <= 0 || srv.Server.Figures.MicrosPerRequest <= 0 || srv.Server.Figures.Completed != s.Load.Requests {
		t.Errorf("server figures %+v, want CPU > 0 over %d requests", srv.Server.Figures, s.Load.Requests)
	}
	if by.Server.Figures.CPUSeconds >= srv.Server.Figures.CPUSeconds {
		t.Errorf("the idle bystander used %.3f s of CPU, the server %.3f s: the trees are mixed up", by.Server.Figures.CPUSeconds, srv.Server.Figures.CPUSeconds)
	}
	if s.HeadlineServer() != srv.Server || s.HeadlineName() != "server" {
		t.Errorf("headline %q, want the companion found by port", s.HeadlineName())
	}
	text, _, code := invoke(t, "report", res)
	if code != 0 || !strings.Contains(text, "Sampled processes") || !strings.Contains(text, "bystander") || !strings.Contains(text, "headline") {
		t.Errorf("report (exit %d) does not show both companions:\n%s", code, text)
	}
	if _, _, code := invoke(t, "verify", res); code != 0 {
		t.Errorf("verify: exit %d", code)
	}
}
