package grpcephemeral

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
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
// with SIGTERM: it exits 0 at once and leaves no process.
func TestBinary(t *testing.T) {
	goBin := testenv.LookPath(t, testenv.Tools, "go")
	bin := filepath.Join(t.TempDir(), "greeter-server")
	if out, err := exec.Command(goBin, "build", "-o", bin, "./cmd/greeter-server").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for name, args := range map[string][]string{"h2c": nil, "tls,reflection,gzip": {"-tls", "-reflection", "-gzip"}} {
		t.Run(name, func(t *testing.T) { testBinary(t, bin, args) })
	}
}

func testBinary(t *testing.T, bin string, args []string) {
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// Killed with the test, should it die first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	waiting := false // exited will tell
	t.Cleanup(func() {
		cmd.Process.Kill() // harmless once it has exited: the PID is held until waited for
		if waiting {
			<-exited
		} else {
			cmd.Wait()
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
		t.Fatalf("no line from greeter-server in 10 s; stderr: %s", stderr.String())
	}
	addr, ok := strings.CutPrefix(strings.TrimSuffix(first, "\n"), "listening on ")
	if !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("first line %q, want \"listening on 127.0.0.1:PORT\"; stderr: %s", first, stderr.String())
	}

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
	pid := cmd.Process.Pid
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waiting = true
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Fatalf("greeter-server after SIGTERM: %v; stderr: %s", err, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("greeter-server still running 5 s after SIGTERM; stderr: %s", stderr.String())
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("pid %d after exit: kill 0 gave %v, want ESRCH", pid, err)
	}
	if want := "served 1 calls, 1 request messages"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q lacks %q", stderr.String(), want)
	}
}
