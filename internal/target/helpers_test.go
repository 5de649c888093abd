package target

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/testenv"

	"github.com/benchrig/benchrig/internal/proc"
)

// need returns the path of a command the test needs: the test is skipped
// when it is missing, or fails when CI=true.
func need(t *testing.T, name string) string {
	t.Helper()
	return testenv.LookPath(t, testenv.Tools, name)
}

var (
	stallOnce sync.Once
	stallBin  string
	stallErr  error
	stallDir  string
)

// stallServer builds examples/servers/stall once per test binary and
// returns the path of the binary.
func stallServer(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, serr := os.Stat(goBin); serr != nil {
			need(t, "go")
		}
	}
	stallOnce.Do(func() {
		stallDir, stallErr = os.MkdirTemp("", "benchrig-target-test-")
		if stallErr != nil {
			return
		}
		stallBin = filepath.Join(stallDir, "stall")
		cmd := exec.Command(goBin, "build", "-o", stallBin, "github.com/benchrig/benchrig/examples/servers/stall")
		if out, err := cmd.CombinedOutput(); err != nil {
			stallErr = fmt.Errorf("go build stall: %v\n%s", err, out)
		}
	})
	if stallErr != nil {
		t.Fatal(stallErr)
	}
	return stallBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if stallDir != "" {
		os.RemoveAll(stallDir)
	}
	os.Exit(code)
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// testSpec returns a spec with a per-test log dir and short timeouts.
func testSpec(t *testing.T, name string, argv ...string) Spec {
	return Spec{
		Name:         name,
		Argv:         argv,
		LogDir:       t.TempDir(),
		StartTimeout: 10 * time.Second,
		StopGrace:    2 * time.Second,
	}
}

// startT starts a target and stops it at the end of the test.
func startT(t *testing.T, spec Spec, probe Probe) *Process {
	t.Helper()
	p, err := Start(context.Background(), spec, probe)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := p.Stop(ctx); err != nil {
			t.Errorf("cleanup Stop: %v", err)
		}
	})
	return p
}

var listenLine = regexp.MustCompile(`listening on (\S+)`)

// listenAddr waits (up to 10 s) for the stall server's "listening on ADDR"
// line in the log and returns ADDR.
func listenAddr(t *testing.T, p *Process) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := listenLine.FindStringSubmatch(p.LogTail(20)); m != nil {
			return m[1]
		}
		if !p.Alive() {
			t.Fatalf("server exited (%s): %s", p.ExitStatus(), p.LogTail(20))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no listening line in %s: %q", p.LogPath(), p.LogTail(20))
	return ""
}

// waitGone waits (up to 10 s) until no live process remains in group pgid.
func waitGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := proc.Default().Group(pgid)
		if err != nil {
			t.Fatal(err)
		}
		if len(m) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v of group %d still alive", m, pgid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// procAlive reports whether pid is a live (non-zombie) process.
func procAlive(pid int) bool {
	return proc.Default().Alive(pid)
}

// statusField reads one field of /proc/PID/status.
func statusField(t *testing.T, pid int, field string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return ""
}

// mustContain fails unless s contains every part.
func mustContain(t *testing.T, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("%q\n  does not contain %q", s, p)
		}
	}
}

// descendsFrom reports whether pid is below ancestor in the process tree
// (targets run under a watchdog: they are grandchildren of the test).
func descendsFrom(fs proc.FS, pid, ancestor int) bool {
	for i := 0; i < 64 && pid > 1; i++ {
		st, err := fs.Stat(pid)
		if err != nil {
			return false
		}
		if st.PPID == ancestor {
			return true
		}
		pid = st.PPID
	}
	return false
}
