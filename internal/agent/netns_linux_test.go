package agent

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/testenv"

	"golang.org/x/sys/unix"
)

// netnsLab is five network namespaces on one bridge (in a sixth), each with
// an address from 198.18.0.0/15 (RFC 2544's benchmark range) and no default
// route: a server, three agents, a coordinator. Names carry a per-run
// suffix; t.Cleanup removes everything, also when the test fails.
type netnsLab struct {
	t      *testing.T
	prefix string
	br     string // benchrig binary
	token  string
}

const (
	labServer = "198.18.0.1"
	labCoord  = "198.18.0.10"
)

func labAgent(i int) string { return fmt.Sprintf("198.18.0.%d", 11+i) }

// needRoot skips when not root and CI is not set; under CI a missing
// privilege or a missing ip(8) is a failure.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Missing(t, testenv.Netns, "network namespaces need root")
	}
	testenv.LookPath(t, testenv.Netns, "ip")
}

func newLab(t *testing.T) *netnsLab {
	needRoot(t)
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	lab := &netnsLab{t: t, prefix: "brg" + hex.EncodeToString(b), token: "netns-test-token-" + hex.EncodeToString(b)}
	lab.br = buildBenchrig(t)
	sw := lab.ns("sw")
	lab.ip("netns", "add", sw)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", sw).Run() })
	lab.ip("-n", sw, "link", "add", "br0", "type", "bridge")
	lab.ip("-n", sw, "link", "set", "br0", "up")
	roles := map[string]string{"srv": labServer, "co": labCoord}
	for i := 0; i < 3; i++ {
		roles[fmt.Sprintf("a%d", i)] = labAgent(i)
	}
	for role, addr := range roles {
		ns := lab.ns(role)
		lab.ip("netns", "add", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
		lab.ip("-n", sw, "link", "add", "v"+role, "type", "veth", "peer", "name", "eth0", "netns", ns)
		lab.ip("-n", sw, "link", "set", "v"+role, "master", "br0", "up")
		lab.ip("-n", ns, "addr", "add", addr+"/24", "dev", "eth0")
		lab.ip("-n", ns, "link", "set", "eth0", "up")
		lab.ip("-n", ns, "link", "set", "lo", "up")
	}
	return lab
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBR != "" {
		_ = os.RemoveAll(filepath.Dir(builtBR))
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	builtBR   string
	buildErr  error
)

// buildBenchrig builds benchrig once for every namespace test, into a temp
// dir TestMain removes.
func buildBenchrig(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "benchrig-netns-")
		if err != nil {
			buildErr = err
			return
		}
		builtBR = filepath.Join(dir, "benchrig")
		if out, err := exec.Command("go", "build", "-o", builtBR, "../../cmd/benchrig").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build benchrig: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBR
}

func (l *netnsLab) ns(role string) string { return l.prefix + "-" + role }

func (l *netnsLab) ip(args ...string) {
	l.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		l.t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// listenIn opens a TCP listener inside namespace ns: this thread enters
// it, listens (the socket stays in ns), and returns to its own namespace.
func listenIn(t *testing.T, ns, addr string) net.Listener {
	t.Helper()
	runtime.LockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	defer self.Close()
	target, err := os.Open("/var/run/netns/" + ns)
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("enter %s: %v", ns, err)
	}
	ln, lerr := net.Listen("tcp", addr)
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		// this thread stays locked and ends with its goroutine
		t.Fatalf("leave %s: %v", ns, err)
	}
	runtime.UnlockOSThread()
	if lerr != nil {
		t.Fatal(lerr)
	}
	return ln
}

// server starts a path-counting HTTP server in the server's namespace.
func (l *netnsLab) server() (*countingServer, string) {
	ln := listenIn(l.t, l.ns("srv"), labServer+":0")
	cs := &countingServer{paths: map[string]int{}}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.mu.Lock()
		cs.paths[r.URL.Path]++
		cs.mu.Unlock()
		_, _ = w.Write([]byte("ok\n"))
	})}
	go func() { _ = srv.Serve(ln) }()
	l.t.Cleanup(func() { _ = srv.Close() })
	return cs, "http://" + ln.Addr().String()
}

// proc is a benchrig process this test started, ended by its PID.
type proc struct {
	cmd  *exec.Cmd
	out  *syncBuf
	done chan struct{}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// start runs benchrig args in namespace role (ip netns exec execs it: the
// PID is benchrig's), the token in its environment.
func (l *netnsLab) start(role string, args ...string) *proc {
	l.t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", l.ns(role), l.br}, args...)...)
	cmd.Env = append(os.Environ(), TokenEnv+"="+l.token, "TMPDIR="+l.t.TempDir())
	p := &proc{cmd: cmd, out: &syncBuf{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	l.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *proc) wait(t *testing.T, d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// run starts the coordinator and three agents on a suite.
func (l *netnsLab) run(suiteText string) (coord *proc, agents []*proc, results string) {
	dir := l.t.TempDir()
	suite := filepath.Join(dir, "suite.yaml")
	results = filepath.Join(dir, "results.json")
	if err := os.WriteFile(suite, []byte(suiteText), 0o644); err != nil {
		l.t.Fatal(err)
	}
	coord = l.start("co", "run", suite, "-o", results, "--agents", "3", "--listen", labCoord+":7946", "--join-for", "1m",
		"--dead-man", patient(l.t).DeadMan.String(), "--agent-timeout", patient(l.t).AgentTimeout.String())
	for i := 0; i < 3; i++ {
		agents = append(agents, l.start(fmt.Sprintf("a%d", i), "agent", "--coordinator", labCoord+":7946", "--index", fmt.Sprint(i), "--dial-for", "1m", "--agent-timeout", patient(l.t).AgentTimeout.String()))
	}
	return coord, agents, results
}

// samples reads a results file's samples.
func samplesOf(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["key"]; ok {
			out = append(out, m)
		}
	}
	return out
}

// TestNetnsAgents runs a suite from three agents in three namespaces
// against a server in a fourth, coordinated from a fifth: the server sees
// every request index exactly once, and the results file verifies.
func TestNetnsAgents(t *testing.T) {
	lab := newLab(t)
	srv, url := lab.server()
	const n = 900
	coord, _, results := lab.run(indexedSuite(url, n, "1500", 6))
	if !coord.wait(t, 90*time.Second) || coord.cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("coordinator: %v\n%s", coord.cmd.ProcessState, coord.out)
	}
	got := srv.counts()
	delete(got, "/probe")
	for i := 0; i < n; i++ {
		if c := got[fmt.Sprintf("/r/%d", i)]; c != 1 {
			t.Fatalf("index %d reached the server %d times", i, c)
		}
	}
	if len(got) != n {
		t.Errorf("the server saw %d paths, want %d", len(got), n)
	}
	if out, err := exec.Command(lab.br, "verify", results).CombinedOutput(); err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	for _, s := range samplesOf(t, results) {
		parts, _ := s["agents"].([]any)
		if len(parts) != 3 {
			t.Fatalf("%d parts", len(parts))
		}
		hosts := map[string]bool{}
		for _, p := range parts {
			hosts[p.(map[string]any)["addr"].(string)[:len("198.18.0.1x")]] = true
		}
		if len(hosts) != 3 {
			t.Errorf("parts came from %v, want three agent addresses", hosts)
		}
	}
	if strings.Contains(coord.out.String(), lab.token) {
		t.Error("the token reached the coordinator's log")
	}
}

// TestNetnsLinkCut cuts one agent's link mid-sample: that sample is
// recorded failed naming the agent, and the next one runs on the two left.
func TestNetnsLinkCut(t *testing.T) {
	lab := newLab(t)
	srv, url := lab.server()
	coord, _, results := lab.run(rateSuite(url, 2))
	if !waitFor(60*time.Second, func() bool { return srv.total() > 300 }) {
		t.Fatalf("no load reached the server\n%s", coord.out)
	}
	lab.ip("-n", lab.ns("a1"), "link", "set", "eth0", "down")
	if !coord.wait(t, 90*time.Second) {
		t.Fatalf("coordinator did not finish\n%s", coord.out)
	}
	ss := samplesOf(t, results)
	if len(ss) != 2 {
		t.Fatalf("%d samples, want 2\n%s", len(ss), coord.out)
	}
	errMsg, _ := ss[0]["error"].(string)
	if !strings.Contains(errMsg, "share 1/3 missing") || !strings.Contains(errMsg, "agent 1 ("+labAgent(1)) {
		t.Errorf("first sample's error %q does not name share 1/3 and agent 1 at %s\n%s", errMsg, labAgent(1), coord.out)
	}
	if e, _ := ss[1]["error"].(string); e != "" {
		t.Errorf("second sample failed: %s", e)
	}
	if parts, _ := ss[1]["agents"].([]any); len(parts) != 2 {
		t.Errorf("second sample ran on %d agents, want the 2 left", len(parts))
	}
}

// TestNetnsCoordinatorKilled kills the coordinator mid-sample: every agent
// stops (its process exits, saying it stopped all load; the time it took,
// about the dead-man, is logged: a deadline here only catches a hang), and
// the server counts no request after that.
func TestNetnsCoordinatorKilled(t *testing.T) {
	lab := newLab(t)
	srv, url := lab.server()
	coord, agents, _ := lab.run(strings.Replace(rateSuite(url, 1), "load: 2s", "load: 60s", 1))
	if !waitFor(60*time.Second, func() bool { return srv.total() > 300 }) {
		t.Fatalf("no load reached the server\n%s", coord.out)
	}
	_ = coord.cmd.Process.Signal(syscall.SIGKILL)
	killed := time.Now()
	for i, a := range agents {
		if !a.wait(t, patient(t).DeadMan+60*time.Second) {
			t.Fatalf("agent %d still runs after its coordinator was killed\n%s", i, a.out)
		}
		t.Logf("agent %d exited %s after its coordinator was killed (dead-man %s)", i, time.Since(killed).Round(time.Millisecond), patient(t).DeadMan)
		if !strings.Contains(a.out.String(), "stopped all load") {
			t.Errorf("agent %d did not say it stopped: %s", i, a.out)
		}
	}
	after := srv.total()
	time.Sleep(time.Second)
	if n := srv.total(); n != after {
		t.Errorf("the server counted %d requests after every agent exited", n-after)
	}
}
