package http

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/testenv"
)

// need returns the path of a command a test needs: the test is skipped
// when it is missing, and fails when CI=true.
func need(t *testing.T, name string) string {
	t.Helper()
	k := map[string]testenv.Kind{"nginx": testenv.Nginx, "node": testenv.Node}[name]
	if k == "" {
		k = testenv.Tools
	}
	return testenv.LookPath(t, k, name)
}

// startServer starts a real server process that prints "listening on
// HOST:PORT" and returns its http:// URL; it is stopped (by its PID) when
// the test ends.
func startServer(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return "http://" + a + "/"
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not print \"listening on\" within 20 s", name)
	}
	return ""
}

var (
	helloOnce sync.Once
	helloBin  string
	helloErr  error
)

// helloServer builds examples/servers/hello once per test binary.
func helloServer(t *testing.T) string {
	t.Helper()
	goBin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = need(t, "go")
	}
	helloOnce.Do(func() {
		dir, err := os.MkdirTemp("", "benchrig-http-test-")
		if err != nil {
			helloErr = err
			return
		}
		helloBin = filepath.Join(dir, "hello")
		out, err := exec.Command(goBin, "build", "-o", helloBin, "github.com/benchrig/benchrig/examples/servers/hello").CombinedOutput()
		if err != nil {
			helloErr = err
			t.Logf("%s", out)
		}
	})
	if helloErr != nil {
		t.Fatalf("build examples/servers/hello: %v", helloErr)
	}
	return helloBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if helloBin != "" {
		os.RemoveAll(filepath.Dir(helloBin))
	}
	os.Exit(code)
}

// idleBetweenWindows runs two load windows on the same engine (the same
// connections) with idle between them, as a settle phase does before the
// load phase.
func idleBetweenWindows(t *testing.T, url string, lc load.Config, idle time.Duration) (first, second *result.Load) {
	t.Helper()
	d, err := New(Config{URL: url, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e, err := load.New(lc, d)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	w := load.Window{Duration: 700 * time.Millisecond}
	if first, err = e.Run(ctx, w); err != nil {
		t.Fatal(err)
	}
	time.Sleep(idle)
	if second, err = e.Run(ctx, w); err != nil {
		t.Fatal(err)
	}
	return first, second
}

// checkIdleReconnects asserts the second window after the server closed
// the idle connections: no errors, the reconnects counted with their
// cause (closed while idle, or reset), the causes summing to the total.
func checkIdleReconnects(t *testing.T, mode string, first, second *result.Load, conns int) {
	t.Helper()
	for i, r := range []*result.Load{first, second} {
		if r.Errors != 0 || r.Timeouts != 0 || r.Unexpected != 0 || r.Requests == 0 {
			t.Errorf("%s window %d: %d ok, %d errors, %d timeouts, %d unexpected: %v", mode, i+1, r.Requests, r.Errors, r.Timeouts, r.Unexpected, r.Messages)
		}
		var sum int64
		for _, n := range r.ReconnectCauses {
			sum += n
		}
		if sum != r.Reconnects {
			t.Errorf("%s window %d: causes %v sum to %d, reconnects %d", mode, i+1, r.ReconnectCauses, sum, r.Reconnects)
		}
	}
	idle := second.ReconnectCauses[driver.CauseIdleClosed] + second.ReconnectCauses[driver.CauseReset]
	if idle < 1 || idle > int64(conns) {
		t.Errorf("%s: %d connections closed by the idle server reopened, want 1–%d: %v", mode, idle, conns, second.ReconnectCauses)
	}
	if mode == "closed" && idle != int64(conns) {
		t.Errorf("closed loop: %d of %d connections reopened after the idle close: %v", idle, conns, second.ReconnectCauses)
	}
	t.Logf("%s: second window %d ok, reconnects %v, re-sent %d", mode, second.Requests, second.ReconnectCauses, second.Resent)
}

func TestIdleNodeServerClosesKeepAlive(t *testing.T) {
	node := need(t, "node")
	script, err := filepath.Abs("../../../../examples/servers/node-http/server.js")
	if err != nil {
		t.Fatal(err)
	}
	// Node's default server.keepAliveTimeout is 5 s: a 12 s idle outlives
	// it even when a loaded machine runs Node's timer seconds late.
	url := startServer(t, []string{"PORT=0", "HOST=127.0.0.1"}, node, script)
	runIdleModes(t, url, 12*time.Second)
}

func TestIdleGoServerClosesKeepAlive(t *testing.T) {
	// a 1 s idle timeout, a 5 s idle: closed even when the server's timer
	// runs late on a loaded machine
	url := startServer(t, nil, helloServer(t), "-addr", "127.0.0.1:0", "-idle-timeout", "1s")
	runIdleModes(t, url, 5*time.Second)
}

// runIdleModes runs the idle test in a closed loop (event loops) and at a
// rate (a goroutine per connection over net.Conn), side by side.
func runIdleModes(t *testing.T, url string, idle time.Duration) {
	const conns = 4
	t.Run("closed", func(t *testing.T) {
		t.Parallel()
		first, second := idleBetweenWindows(t, url, load.Config{EngineConfig: result.EngineConfig{Connections: conns, Pipeline: 1}}, idle)
		checkIdleReconnects(t, "closed", first, second, conns)
	})
	t.Run("rate", func(t *testing.T) {
		t.Parallel()
		first, second := idleBetweenWindows(t, url, load.Config{EngineConfig: result.EngineConfig{Connections: conns, Pipeline: 1, Rate: 400}}, idle)
		checkIdleReconnects(t, "rate", first, second, conns)
	})
}
