package redisephemeral

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/resp"
	"github.com/benchrig/benchrig/internal/resp/resptest"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/secret/secrettest"
	"github.com/benchrig/benchrig/internal/testenv"
)

// needRedis skips the test when redis-server is not installed, or fails it
// under CI, where it must be.
func needRedis(t *testing.T) {
	t.Helper()
	testenv.LookPath(t, testenv.Redis, DefaultBin)
}

// startServer starts a server that the test's cleanup stops.
func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	needRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestStartStopLeavesNothing(t *testing.T) {
	s := startServer(t, Options{MaxClients: 64})
	pid, dir := s.PID(), s.Dir()
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
		t.Fatalf("server process %d not running: %v", pid, err)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+`).MatchString(s.Version()) {
		t.Fatalf("Version() = %q", s.Version())
	}
	if host, _, _ := net.SplitHostPort(s.Addr()); host != "127.0.0.1" {
		t.Fatalf("Addr() = %q, want 127.0.0.1", s.Addr())
	}
	info, err := s.Info(ctx(t), "server clients")
	if err != nil {
		t.Fatal(err)
	}
	if info["redis_version"] != s.Version() {
		t.Fatalf("INFO redis_version %q, Version() %q", info["redis_version"], s.Version())
	}
	if info["process_id"] != strconv.Itoa(pid) {
		t.Fatalf("INFO process_id %q, PID() %d", info["process_id"], pid)
	}
	cfg, err := s.Info(ctx(t), "persistence")
	if err != nil {
		t.Fatal(err)
	}
	if cfg["aof_enabled"] != "0" {
		t.Fatalf("aof_enabled = %q, want 0", cfg["aof_enabled"])
	}
	if _, err := os.Stat(s.LogFile()); err != nil {
		t.Fatalf("log file: %v", err)
	}

	if err := s.Stop(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("process %d still exists after Stop (stat: %v)", pid, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temp dir %s still exists after Stop (stat: %v)", dir, err)
	}
	if err := s.Stop(ctx(t)); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestStopAfterCrash(t *testing.T) {
	s := startServer(t, Options{})
	p, err := os.FindProcess(s.PID())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil { // our own child
		t.Fatal(err)
	}
	if err := s.Stop(ctx(t)); err != nil {
		t.Fatalf("Stop after the server died: %v", err)
	}
	if _, err := os.Stat(s.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temp dir left behind: %v", err)
	}
}

func TestRequirePass(t *testing.T) {
	const pass = "s3cret pass \"quoted\""
	s := startServer(t, Options{Password: secret.New(pass)})
	// The server holds the password as a secret.Value: printing it (its
	// fields included) never shows it.
	secrettest.NoLeak(t, s, pass, "s3cret")

	// Do authenticates by itself.
	if out, err := s.Do(ctx(t), "SET", "k", "v"); err != nil || out != "OK" {
		t.Fatalf("SET with password: %q, %v", out, err)
	}
	// A raw connection is refused until AUTH.
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	rd := resp.NewReader(conn, resp.Limits{})
	exchange := func(args ...string) string {
		t.Helper()
		if _, err := conn.Write(resp.AppendCommandString(nil, args...)); err != nil {
			t.Fatal(err)
		}
		rep, err := rd.ReadReply()
		if err != nil {
			t.Fatal(err)
		}
		return string(rep.Kind) + string(rep.Data)
	}
	if got := exchange("GET", "k"); !strings.HasPrefix(got, "-NOAUTH") {
		t.Fatalf("GET before AUTH: %q, want -NOAUTH", got)
	}
	if got := exchange("AUTH", "wrong"); !strings.HasPrefix(got, "-WRONGPASS") {
		t.Fatalf("AUTH wrong: %q, want -WRONGPASS", got)
	}
	if got := exchange("AUTH", pass); got != "+OK" {
		t.Fatalf("AUTH right: %q, want +OK", got)
	}
	if got := exchange("GET", "k"); got != "$v" {
		t.Fatalf("GET after AUTH: %q", got)
	}

	// The password is in the 0600 config file only: not on the command line,
	// not in the log.
	st, err := os.Stat(filepath.Join(s.Dir(), "redis.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o600 {
		t.Fatalf("redis.conf mode %o, want 600", perm)
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(s.PID()) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cmdline), "s3cret") {
		t.Fatal("password on the command line")
	}
	log, _ := os.ReadFile(s.LogFile())
	if strings.Contains(string(log), "s3cret") {
		t.Fatal("password in the log")
	}
}

func TestStatsDelta(t *testing.T) {
	s := startServer(t, Options{})
	if _, err := s.Do(ctx(t), "SET", "hit", "1"); err != nil {
		t.Fatal(err)
	}
	before, err := s.Stats(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if before.UsedMemory <= 0 {
		t.Fatalf("used_memory = %d", before.UsedMemory)
	}
	for _, k := range []string{"hit", "hit", "miss"} {
		if _, err := s.Do(ctx(t), "GET", k); err != nil {
			t.Fatal(err)
		}
	}
	after, err := s.Stats(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	if d.KeyspaceHits != 2 || d.KeyspaceMisses != 1 {
		t.Fatalf("delta hits %d misses %d, want 2 and 1", d.KeyspaceHits, d.KeyspaceMisses)
	}
	// Three GETs and the first INFO (the second is counted after its reply).
	if d.TotalCommandsProcessed != 4 {
		t.Fatalf("delta total_commands_processed %d, want 4", d.TotalCommandsProcessed)
	}
	if d.UsedMemory != after.UsedMemory {
		t.Fatal("Sub changed the used_memory gauge")
	}
}

func TestStartFailureIsCleanAndRedacted(t *testing.T) {
	needRedis(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	const pass = "hunter2-topsecret"
	_, err := Start(ctx(t), Options{Password: secret.New(pass), ExtraConfig: []string{"no-such-directive " + pass}})
	if err == nil {
		t.Fatal("Start with a bad config succeeded")
	}
	msg := err.Error()
	if strings.Contains(msg, pass) {
		t.Fatalf("error shows the password: %s", msg)
	}
	if !strings.Contains(msg, "exited during startup") || !strings.Contains(msg, "no-such-directive") {
		t.Fatalf("error does not explain the failure: %s", msg)
	}
	left, _ := os.ReadDir(tmp)
	if len(left) != 0 {
		t.Fatalf("temp dirs left behind: %v", left)
	}
}

func TestStartMissingBinary(t *testing.T) {
	_, err := Start(ctx(t), Options{Bin: "/nonexistent/redis-server"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/redis-server") {
		t.Fatalf("got %v, want an error naming the binary", err)
	}
}

func TestTLS(t *testing.T) {
	certPEM, keyPEM, err := resptest.GenerateCert()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, Options{TLSCertFile: certFile, TLSKeyFile: keyFile, Password: secret.New("pw")})
	if !s.TLS() {
		t.Fatal("TLS() = false")
	}
	if out, err := s.Do(ctx(t), "PING"); err != nil || out != "PONG" {
		t.Fatalf("PING over TLS: %q, %v", out, err)
	}
}

func TestOptionsValidation(t *testing.T) {
	for name, o := range map[string]Options{
		"negative max_clients": {MaxClients: -1},
		"cert without key":     {TLSCertFile: "c.pem"},
		"multi-line extra":     {ExtraConfig: []string{"a\nb"}},
	} {
		if _, err := o.withDefaults(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
