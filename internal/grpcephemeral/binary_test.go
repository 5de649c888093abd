package grpcephemeral

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/testenv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/reflection/grpc_reflection_v1"
)

// TestBinary builds cmd/greeter-server, starts it, calls it, and stops it
// with SIGTERM: it exits 0 at once and leaves no process; the same with
// -json, over HTTP/1.1.
func TestBinary(t *testing.T) {
	goBin := testenv.LookPath(t, testenv.Tools, "go")
	bin := filepath.Join(t.TempDir(), "greeter-server")
	if out, err := exec.Command(goBin, "build", "-o", bin, "./cmd/greeter-server").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for name, args := range map[string][]string{"h2c": nil, "tls,reflection,gzip": {"-tls", "-reflection", "-gzip"}} {
		t.Run(name, func(t *testing.T) { testBinary(t, bin, args) })
	}
	t.Run("json", func(t *testing.T) { testBinaryJSON(t, bin) })
}

// binaryProcess is a started greeter-server.
type binaryProcess struct {
	cmd     *exec.Cmd
	addr    string
	stderr  *bytes.Buffer
	exited  chan error
	waiting bool // exited will tell
}

// startBinary starts greeter-server with args and reads its first line,
// "listening on 127.0.0.1:PORT"; the test's cleanup kills it if it still
// runs.
func startBinary(t *testing.T, bin string, args ...string) *binaryProcess {
	t.Helper()
	p := &binaryProcess{cmd: exec.Command(bin, args...), stderr: new(bytes.Buffer), exited: make(chan error, 1)}
	p.cmd.Stderr = p.stderr
	// Killed with the test, should it die first.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.cmd.Process.Kill() // harmless once it has exited: the PID is held until waited for
		if p.waiting {
			<-p.exited
		} else {
			p.cmd.Wait()
		}
	})

	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- l
	}()
	var first string
	select {
	case first = <-line:
	case <-time.After(10 * time.Second):
		t.Fatalf("no line from greeter-server in 10 s; stderr: %s", p.stderr.String())
	}
	addr, ok := strings.CutPrefix(strings.TrimSuffix(first, "\n"), "listening on ")
	if !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("first line %q, want \"listening on 127.0.0.1:PORT\"; stderr: %s", first, p.stderr.String())
	}
	p.addr = addr
	return p
}

// stop sends SIGTERM: the process exits 0 within 5 s and leaves no
// process; its standard error must hold want.
func (p *binaryProcess) stop(t *testing.T, want string) {
	t.Helper()
	pid := p.cmd.Process.Pid
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.waiting = true
	go func() { p.exited <- p.cmd.Wait() }()
	select {
	case err := <-p.exited:
		p.exited <- err // for the cleanup
		if err != nil {
			t.Fatalf("greeter-server after SIGTERM: %v; stderr: %s", err, p.stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("greeter-server still running 5 s after SIGTERM; stderr: %s", p.stderr.String())
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("pid %d after exit: kill 0 gave %v, want ESRCH", pid, err)
	}
	if !strings.Contains(p.stderr.String(), want) {
		t.Errorf("stderr %q lacks %q", p.stderr.String(), want)
	}
}

func testBinary(t *testing.T, bin string, args []string) {
	p := startBinary(t, bin, args...)
	addr := p.addr
	ctx := testCtx(t)
	withFlags := len(args) > 0
	creds := insecure.NewCredentials()
	var opts []grpc.CallOption
	if withFlags {
		creds = credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the server's certificate is made at its start
		opts = append(opts, grpc.UseCompressor(gzip.Name))
	}
	conn := dialAddr(t, addr, grpc.WithTransportCredentials(creds))
	msg, id, err := invoke(ctx, t, conn, "SayHello", map[string]any{"name": "bin", "id": int64(5)}, opts...)
	if err != nil || msg != "hello bin" || id != 5 {
		t.Fatalf("SayHello: %q %d %v", msg, id, err)
	}
	if withFlags {
		if _, err := reflect(ctx, t, conn, &grpc_reflection_v1.ServerReflectionRequest{
			MessageRequest: &grpc_reflection_v1.ServerReflectionRequest_ListServices{ListServices: "*"},
		}); err != nil {
			t.Fatalf("reflection: %v", err)
		}
	}

	// The client's connection stays open: it must not hold the exit up.
	p.stop(t, "served 1 calls, 1 request messages")
}

// testBinaryJSON: with -json the binary answers SayHello as JSON over
// HTTP/1.1, and a kept-alive connection does not hold its exit up.
func testBinaryJSON(t *testing.T, bin string) {
	p := startBinary(t, bin, "-json")
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	url := "http://" + p.addr + "/" + ServiceName + "/SayHello"
	resp, err := client.Post(url, "application/json", strings.NewReader(`{"name":"bin","id":5}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Proto != "HTTP/1.1" || resp.Header.Get("Content-Type") != "application/json" || string(body) != `{"message":"hello bin","id":"5"}` {
		t.Fatalf("POST SayHello: %s %s %q %q", resp.Proto, resp.Status, resp.Header.Get("Content-Type"), body)
	}
	resp, err = client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET SayHello: %s, want 405", resp.Status)
	}
	p.stop(t, "served 1 calls, 1 request messages")

	// -json is HTTP/1.1 in cleartext: gRPC's options are refused.
	out, err := exec.Command(bin, "-json", "-tls").CombinedOutput()
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "-json serves HTTP/1.1 in cleartext") {
		t.Errorf("-json -tls: %v %q, want exit 2 naming the conflict", err, out)
	}
}
