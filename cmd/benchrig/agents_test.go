package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/agent"
	"github.com/benchrig/benchrig/internal/agent/k8s"
	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/testenv"
)

// TestRunAgentsLocal runs a suite with --agents 3 --local (three agent
// processes of this benchrig): the results file verifies, reports and
// compares like any other; every sample records its three parts, whose
// counts sum to the merged ones; a file cut after its first sample is
// completed by --resume with agents, and verifies.
func TestRunAgentsLocal(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	dir := t.TempDir()
	br := linkBuild(t, ".", dir, "benchrig")
	hello := buildExample(t, "hello")
	suite := filepath.Join(dir, "suite.yaml")
	os.WriteFile(suite, []byte(fmt.Sprintf(`name: agents-local
seed: 1
repeats: 2
sampler: {interval: 250ms}
phases: {baseline: 200ms, warmup: 500ms, settle: 200ms, load: 3s, recovery: 200ms}
thresholds: {coverage: 0, p99: 10s}
targets:
  hello:
    command: [%q, "-addr", "127.0.0.1:{port}"]
    ready: {http: "http://127.0.0.1:{port}/"}
paths:
  root: {http: {url: "http://127.0.0.1:{port}/"}}
matrix: {targets: [hello], paths: [root], connections: [6], rates: [600]}
`, hello)), 0o644)
	out := filepath.Join(dir, "results.json")
	runBR := func(args ...string) string {
		cmd := exec.Command(br, args...)
		cmd.Env = append(os.Environ(), "TMPDIR="+dir)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("benchrig %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}
	// the agents' deadlines from this machine's scheduling delay and load:
	// a CPU-starved agent must not be taken for a lost one
	dm := testenv.Patience(agent.DeadMan, 20*time.Second)
	timings := []string{"--dead-man", dm.String(), "--agent-timeout", (3 * dm).String()}
	t.Logf("dead-man %s", dm)
	log := runBR(append([]string{"run", suite, "-o", out, "--agents", "3", "--local", "--listen", "127.0.0.1:0"}, timings...)...)
	if !strings.Contains(log, "all 3 agents joined") {
		t.Errorf("no join in the log:\n%s", log)
	}
	for _, args := range [][]string{{"verify", out}, {"report", out}, {"compare", out, out}} {
		if o, e, code := invoke(t, args...); code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", args[0], code, o, e)
		}
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, out)), "\n")
	if len(lines) != 4 { // header, 2 samples, footer
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines[1:3] {
		var s struct {
			Error string `json:"error"`
			Load  struct {
				Requests int64 `json:"requests"`
			} `json:"load"`
			Agents []struct {
				Share    string `json:"share"`
				Requests int64  `json:"requests"`
			} `json:"agents"`
		}
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, a := range s.Agents {
			sum += a.Requests
		}
		if s.Error != "" || len(s.Agents) != 3 || sum != s.Load.Requests || sum == 0 {
			t.Errorf("sample: error %q, %d parts summing to %d, merged %d", s.Error, len(s.Agents), sum, s.Load.Requests)
		}
	}
	// cut after the first sample, as a crash would leave it; resume.
	os.WriteFile(out, []byte(lines[0]+"\n"+lines[1]+"\n"), 0o644)
	// resumed with the live page: the second sample's load as the agents
	// run it, each agent's part beside the merged requests
	events := watchUI(t, exec.Command(br, append([]string{"run", suite, "-o", out, "--resume", "--agents", "3", "--local", "--listen", "127.0.0.1:0",
		"--ui", "--ui-linger", "1s"}, timings...)...), dir)
	for _, want := range []string{"agent 0", "agent 1", "agent 2", "Latency per second"} {
		if !strings.Contains(events, want) {
			t.Errorf("the live page's events never showed %q", want)
		}
	}
	if o, e, code := invoke(t, "verify", out); code != 0 {
		t.Fatalf("verify after resume: exit %d\n%s%s", code, o, e)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRunAgentsBadFlags: agent flags are checked before anything starts.
func TestRunAgentsBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "x.yaml", "-o", "r.json", "--local"}, "go with --agents"},
		{[]string{"agent"}, "--coordinator"},
		{[]string{"agent", "--coordinator", "127.0.0.1:1", "--index", "-2"}, "--index must be"},
	} {
		_, e, code := invoke(t, c.args...)
		if code != exitcode.BadUsage || !strings.Contains(e, c.want) {
			t.Errorf("%v: exit %d %q, want usage error with %q", c.args, code, e, c.want)
		}
	}
}

// TestK8sCommand: benchrig k8s prints the Indexed Job of the agents for a
// suite, refuses bad flags as usage errors, and k8s fetch recovers what run
// --log-results printed.
func TestK8sCommand(t *testing.T) {
	dir := t.TempDir()
	suite := filepath.Join(dir, "s.yaml")
	os.WriteFile(suite, []byte(`name: My_Bench
targets: {web: {address: {addr: "web:8080"}}}
paths: {root: {http: {url: "http://web:8080/"}}}
matrix: {targets: [web], paths: [root], connections: [8]}
`), 0o644)
	out, e, code := invoke(t, "k8s", suite, "--agents", "3", "--image", "r/benchrig:1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	for _, want := range []string{"completionMode: Indexed", "completions: 3", "name: my-bench-agents", "name: my-bench-token", "--coordinator\n        - my-bench-coordinator:7946"} {
		if !strings.Contains(out, want) {
			t.Errorf("manifests lack %q", want)
		}
	}
	if _, e, code := invoke(t, "k8s", suite, "--agents", "0", "--image", "r/b:1"); code != exitcode.BadUsage || !strings.Contains(e, "--agents") {
		t.Errorf("--agents 0: exit %d %q", code, e)
	}
	log := filepath.Join(dir, "pod.log")
	res := filepath.Join(dir, "results.json")
	os.WriteFile(res, []byte("{\"a\":1}\n"), 0o644)
	f, _ := os.Create(log)
	if err := k8s.EmitFile(f, res); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got := filepath.Join(dir, "got.json")
	if _, e, code := invoke(t, "k8s", "fetch", log, "-o", got); code != 0 {
		t.Fatalf("fetch: exit %d %s", code, e)
	}
	if readFile(t, got) != "{\"a\":1}\n" {
		t.Errorf("fetched %q", readFile(t, got))
	}
}
