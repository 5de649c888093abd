package grpcephemeral

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/resp/resptest"
	"github.com/benchrig/benchrig/internal/testenv"
)

// The same Greeter service on @grpc/grpc-js: examples/grpc/server.js, run
// by the Node 24 that `make seeds-npm` installs there from npm.

// NodeExampleDir is the directory of the Node server, relative to the
// repository's root.
const NodeExampleDir = "examples/grpc"

// NodeBinary is the Node the server runs on, relative to NodeExampleDir.
const NodeBinary = "node_modules/node24/bin/node"

// Bounds of a Node server's start and stop. They only catch a hang: Node
// starts in well under a second.
const (
	nodeStartWait = 30 * time.Second
	nodeStopWait  = 5 * time.Second
)

// NodeOptions configures StartNode. The zero value serves cleartext
// HTTP/2 (h2c) on a free port of 127.0.0.1.
type NodeOptions struct {
	// TLS serves TLS (server.js --tls) with a self-signed certificate for
	// 127.0.0.1 and localhost made for the test, its key written into the
	// test's temporary directory; clients trust NodeServer.CACertPEM.
	TLS bool
}

// NodeServer is a running examples/grpc/server.js, in a process group of
// its own. The test's cleanup stops it (Stop).
type NodeServer struct {
	cmd     *exec.Cmd
	addr    string
	certPEM []byte
	stderr  lockedBuffer
	exited  chan struct{} // closed once cmd.Wait has returned; waitErr is then set
	waitErr error
	stop    sync.Once
	stopErr error
}

// RepoRoot returns the repository's root: the nearest directory above the
// working directory (or it) that holds go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("grpcephemeral: no go.mod in the working directory or above it: not inside the repository")
		}
		dir = up
	}
}

// NodeRuntime returns the example's directory and its Node binary; a
// missing Node 24 or @grpc/grpc-js ends the test through testenv (a
// failure when the run is strict, as under CI=true; else a skip saying to
// run make seeds-npm).
func NodeRuntime(t testing.TB) (dir, node string) {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(root, filepath.FromSlash(NodeExampleDir))
	node = filepath.Join(dir, filepath.FromSlash(NodeBinary))
	for _, need := range []string{NodeBinary, "node_modules/@grpc/grpc-js/package.json", "node_modules/@grpc/proto-loader/package.json"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(need))); err != nil {
			testenv.Missing(t, testenv.Seeds, fmt.Sprintf("%s/%s is missing: run make seeds-npm", NodeExampleDir, need))
		}
	}
	return dir, node
}

// StartNode starts `node server.js --port 0` in examples/grpc, in a
// process group of its own, and returns once it has printed "listening on
// 127.0.0.1:PORT". The test's cleanup stops it and fails the test if it
// did not exit 0 on SIGTERM.
func StartNode(t testing.TB, opts NodeOptions) *NodeServer {
	t.Helper()
	dir, node := NodeRuntime(t)
	s := &NodeServer{exited: make(chan struct{})}
	args := []string{"server.js", "--port", "0"}
	if opts.TLS {
		certPEM, keyPEM, err := resptest.GenerateCert()
		if err != nil {
			t.Fatal(err)
		}
		tmp := t.TempDir()
		cert, key := filepath.Join(tmp, "cert.pem"), filepath.Join(tmp, "key.pem")
		if err := os.WriteFile(cert, certPEM, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		s.certPEM = certPEM
		args = append(args, "--tls", cert, key)
	}
	s.cmd = exec.Command(node, args...)
	s.cmd.Dir = dir
	s.cmd.Stderr = &s.stderr
	// Its own group, signalled whole; killed with the test, should it die
	// first.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// A pipe of our own (not StdoutPipe): Wait may then run beside the
	// reads, and the reader sees EOF once the process is gone.
	stdout, pw := io.Pipe()
	s.cmd.Stdout = pw
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start %s server.js: %v", node, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		pw.Close()
		close(s.exited)
	}()
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("examples/grpc/server.js: %v", err)
		}
	})

	line := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		l, _ := r.ReadString('\n')
		line <- l
		io.Copy(io.Discard, r) // the server never blocks on its standard output
	}()
	var first string
	select {
	case first = <-line:
	case <-time.After(nodeStartWait):
		t.Fatalf("examples/grpc/server.js printed no line in %s; stderr: %s", nodeStartWait, s.stderr.String())
	}
	addr, ok := strings.CutPrefix(strings.TrimSuffix(first, "\n"), "listening on ")
	if !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
		<-s.exitedOrAfter(nodeStopWait)
		t.Fatalf("examples/grpc/server.js: first line %q, want \"listening on 127.0.0.1:PORT\"; stderr: %s", first, s.stderr.String())
	}
	s.addr = addr
	return s
}

// exitedOrAfter is a channel closed when the process has exited or d has
// passed.
func (s *NodeServer) exitedOrAfter(d time.Duration) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		defer close(c)
		select {
		case <-s.exited:
		case <-time.After(d):
		}
	}()
	return c
}

// Addr returns the address the server listens on, e.g. "127.0.0.1:40123".
func (s *NodeServer) Addr() string { return s.addr }

// PID returns the server's process ID, which is also its process group's.
func (s *NodeServer) PID() int { return s.cmd.Process.Pid }

// CACertPEM returns the certificate the server serves, as PEM, for clients
// to trust as a root; nil without TLS.
func (s *NodeServer) CACertPEM() []byte { return s.certPEM }

// Stderr returns what the server has written to its standard error; after
// Stop, its last line counts the calls and request messages it served.
func (s *NodeServer) Stderr() string { return s.stderr.String() }

// Stop sends SIGTERM to the server's process group and waits for it to
// exit, 5 s at most; then it kills the group. It returns an error when the
// server did not exit 0 by itself in time. It is idempotent.
func (s *NodeServer) Stop() error {
	s.stop.Do(func() {
		select {
		case <-s.exited:
			s.stopErr = fmt.Errorf("exited before it was stopped: %v; stderr: %s", s.waitErr, s.stderr.String())
			return
		default:
		}
		pgid := s.cmd.Process.Pid
		if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			s.stopErr = fmt.Errorf("SIGTERM to process group %d: %w", pgid, err)
		}
		select {
		case <-s.exited:
			if s.waitErr != nil && s.stopErr == nil {
				s.stopErr = fmt.Errorf("after SIGTERM: %v; stderr: %s", s.waitErr, s.stderr.String())
			}
		case <-time.After(nodeStopWait):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-s.exited
			s.stopErr = fmt.Errorf("still running %s after SIGTERM: killed; stderr: %s", nodeStopWait, s.stderr.String())
		}
	})
	return s.stopErr
}

// lockedBuffer is a bytes.Buffer written by exec's copying goroutine and
// read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
