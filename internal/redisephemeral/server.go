package redisephemeral

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/tmpdir"
)

// Server is a running ephemeral redis-server. Stop it with Stop.
type Server struct {
	opts Options // without the Password: that is password
	// password is Options.Password, held as a secret.Value so that
	// printing the server never shows it.
	password secret.Value
	bin      string
	version  string
	dir      string
	logFile  string
	outFile  string
	addr     string
	cmd      *exec.Cmd
	exited   chan struct{} // closed when the process has been waited for
	waitErr  error         // set before exited is closed
	stopOnce sync.Once
	stopErr  error
}

// portAttempts bounds retries when the free port picked is taken before
// redis binds it.
const portAttempts = 3

// Start starts redis-server on a free port of 127.0.0.1 and waits until it
// answers PING (authenticated when a password is set). On failure nothing is
// left running and the temporary directory is removed.
func Start(ctx context.Context, opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	bin, err := exec.LookPath(opts.Bin)
	if err != nil {
		return nil, fmt.Errorf("redis: find %q (install redis-server or set Options.Bin): %w", opts.Bin, err)
	}
	version, err := Version(ctx, bin)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		s, err := start(ctx, opts, bin, version)
		if err == nil {
			return s, nil
		}
		if attempt >= portAttempts || !errors.Is(err, errPortTaken) || ctx.Err() != nil {
			return nil, err
		}
	}
}

// errPortTaken marks a start that failed because the port was taken.
var errPortTaken = errors.New("port already in use")

// start makes one attempt on one free port.
func start(ctx context.Context, opts Options, bin, version string) (_ *Server, err error) {
	dir, err := tmpdir.New("", "redis")
	if err != nil {
		return nil, fmt.Errorf("redis: create temp dir: %w", err)
	}
	defer func() {
		if err != nil {
			tmpdir.Remove(dir)
		}
	}()
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("redis: pick a free port: %w", err)
	}
	s := &Server{
		opts:     opts,
		password: opts.Password,
		bin:      bin,
		version:  version,
		dir:      dir,
		logFile:  filepath.Join(dir, "redis.log"),
		outFile:  filepath.Join(dir, "stdout.log"),
		addr:     net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		exited:   make(chan struct{}),
	}
	conf := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(conf, []byte(opts.configFile(dir, port, s.logFile)), 0o600); err != nil {
		return nil, fmt.Errorf("redis: write config: %w", err)
	}
	out, err := os.OpenFile(s.outFile, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("redis: create output log: %w", err)
	}
	defer out.Close() // the child has its own copy
	// "-" reads the rest of the configuration (the password) from stdin.
	s.cmd = exec.Command(bin, conf, "-")
	s.cmd.Stdin = strings.NewReader(opts.secretConfig())
	s.cmd.Dir = dir
	s.cmd.Env = secret.Environ() // none of benchrig's credentials: its own come on stdin
	s.cmd.Stdout = out
	s.cmd.Stderr = out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Pdeathsig fires when the thread that forked the child exits, so fork
	// from a thread that is locked for the duration and then returned to
	// the runtime's pool (which keeps it) rather than destroyed.
	runtime.LockOSThread()
	err = s.cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		return nil, fmt.Errorf("redis: start %s: %w", bin, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(ctx); err != nil {
		s.kill()
		return nil, err
	}
	return s, nil
}

// waitReady polls PING until PONG, the process exits, or the start timeout.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	var last error
	for {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		last = s.ping(pctx)
		pcancel()
		if last == nil {
			return nil
		}
		select {
		case <-s.exited:
			tail := s.logTail()
			if strings.Contains(tail, "Address already in use") {
				return fmt.Errorf("redis: %s: %w", s.addr, errPortTaken)
			}
			return fmt.Errorf("redis: redis-server exited during startup (%v); logs in %s:\n%s", s.waitErr, s.dir, tail)
		case <-ctx.Done():
			return fmt.Errorf("redis: redis-server on %s not ready within %v (last probe: %v); log %s ends:\n%s",
				s.addr, s.opts.StartTimeout, last, s.logFile, s.logTail())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// kill ends the process group at once and waits for the process.
func (s *Server) kill() {
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
	}
}

// Stop stops the server: SIGTERM to its process group, SIGKILL after
// Options.StopGrace or when ctx ends, then removes the temporary directory.
// It is idempotent: later calls return the first call's result.
func (s *Server) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.stop(ctx) })
	return s.stopErr
}

func (s *Server) stop(ctx context.Context) error {
	pgid := s.cmd.Process.Pid
	select {
	case <-s.exited:
	default:
		if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("redis: stop pid %d: %w", pgid, err)
		}
		grace := time.NewTimer(s.opts.StopGrace)
		select {
		case <-s.exited:
		case <-grace.C:
		case <-ctx.Done():
		}
		grace.Stop()
	}
	// Whatever is left of the group (the server if it ignored SIGTERM, or
	// any child it forked) goes now.
	s.kill()
	select {
	case <-s.exited:
	default:
		return fmt.Errorf("redis: pid %d did not exit after SIGKILL; temp dir %s kept", pgid, s.dir)
	}
	if err := tmpdir.Remove(s.dir); err != nil {
		return fmt.Errorf("redis: remove temp dir: %w", err)
	}
	return nil
}

// Addr returns the server's address, "127.0.0.1:port".
func (s *Server) Addr() string { return s.addr }

// PID returns the server's process id (also its process group id).
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Version returns the server's version, e.g. "7.0.15".
func (s *Server) Version() string { return s.version }

// Bin returns the absolute path of the redis-server executable.
func (s *Server) Bin() string { return s.bin }

// Dir returns the temporary directory (configuration and logs), removed by
// Stop.
func (s *Server) Dir() string { return s.dir }

// LogFile returns the path of the server's log file.
func (s *Server) LogFile() string { return s.logFile }

// TLS reports whether the server speaks TLS.
func (s *Server) TLS() bool { return s.opts.TLSCertFile != "" }

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// logTailLines is how many lines of each log an error quotes.
const logTailLines = 10

// logTail returns the last lines of the server's log and captured output,
// with the password redacted.
func (s *Server) logTail() string {
	var b strings.Builder
	for _, f := range []string{s.outFile, s.logFile} {
		data, err := os.ReadFile(f)
		if err != nil || len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > logTailLines {
			lines = lines[len(lines)-logTailLines:]
		}
		fmt.Fprintf(&b, "  %s:\n", filepath.Base(f))
		for _, l := range lines {
			b.WriteString("    " + l + "\n")
		}
	}
	if b.Len() == 0 {
		return "  (logs empty)"
	}
	return s.redact(b.String())
}

// redact removes the password, raw and as quoted in redis.conf, from text.
func (s *Server) redact(text string) string {
	if p := s.password.Reveal(); p != "" {
		text = secret.Scrub(text, quote(p), p)
	}
	return text
}
