package pgephemeral

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/benchrig/benchrig/internal/tmpdir"
)

// Defaults of Options.
const (
	DefaultMaxConnections = 100
	DefaultSharedBuffers  = "128MB"
	DefaultSuperuser      = "postgres"
	DefaultStartTimeout   = 60 * time.Second
	DefaultStopGrace      = 10 * time.Second
	// ConnectionReserve is what MaxConnectionsFor adds to the largest number
	// of benchmark connections: superuser_reserved_connections (3), benchrig's
	// control connection, and slack for cancel requests and probes.
	ConnectionReserve = 10
)

// MaxConnectionsFor sizes max_connections for a matrix whose largest cell
// opens largest connections.
func MaxConnectionsFor(largest int) int { return max(largest, 0) + ConnectionReserve }

// Options configure an ephemeral server. The zero value is usable.
type Options struct {
	// Bin is the directory holding initdb and postgres; empty searches PATH
	// and the usual install locations (see FindBinaries).
	Bin string `json:"bin,omitempty"`
	// MaxConnections is max_connections (default 100; see MaxConnectionsFor).
	MaxConnections int `json:"max_connections,omitempty"`
	// SharedBuffers is shared_buffers (default 128MB).
	SharedBuffers string `json:"shared_buffers,omitempty"`
	// Settings are further server settings; they override the defaults.
	Settings map[string]string `json:"settings,omitempty"`
	// User is the unprivileged system user the server runs as when benchrig
	// runs as root (default "postgres"; created when missing).
	User string `json:"user,omitempty"`
	// Superuser is the database superuser initdb creates (default
	// "postgres"). It connects without a password over loopback; every other
	// role needs one (scram-sha-256).
	Superuser string `json:"superuser,omitempty"`
	// TempDir is where the server's directory is created (default the
	// system temporary directory). The server's user must be able to reach it.
	TempDir string `json:"temp_dir,omitempty"`
	// Port is the TCP port on 127.0.0.1; 0 picks a free one.
	Port int `json:"port,omitempty"`
	// StartTimeout bounds initdb plus startup (default 60s).
	StartTimeout time.Duration `json:"start_timeout,omitempty"`
	// StopGrace is how long Stop waits for a fast shutdown before SIGKILL
	// (default 10s).
	StopGrace time.Duration `json:"stop_grace,omitempty"`
}

var settingName = regexp.MustCompile(`^[a-z_][a-z0-9_.]*$`)

// withDefaults fills zero fields and validates the result.
func (o Options) withDefaults() (Options, error) {
	if o.MaxConnections == 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.SharedBuffers == "" {
		o.SharedBuffers = DefaultSharedBuffers
	}
	if o.Superuser == "" {
		o.Superuser = DefaultSuperuser
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.StopGrace == 0 {
		o.StopGrace = DefaultStopGrace
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	switch {
	case o.MaxConnections < 5 || o.MaxConnections > 100000:
		return o, fmt.Errorf("postgres: max_connections %d: must be between 5 and 100000", o.MaxConnections)
	case o.Port < 0 || o.Port > 65535:
		return o, fmt.Errorf("postgres: port %d: must be between 0 (pick a free one) and 65535", o.Port)
	case o.StartTimeout < 0 || o.StopGrace < 0:
		return o, fmt.Errorf("postgres: start_timeout and stop_grace must not be negative")
	case !settingName.MatchString(o.Superuser):
		return o, fmt.Errorf("postgres: superuser %q: use lowercase letters, digits and underscores", o.Superuser)
	}
	for k, v := range o.Settings {
		if !settingName.MatchString(k) {
			return o, fmt.Errorf("postgres: setting %q: not a PostgreSQL setting name (lowercase letters, digits, _ and .)", k)
		}
		if strings.ContainsAny(v, "\x00\n\r") {
			return o, fmt.Errorf("postgres: setting %s: value must be a single line", k)
		}
	}
	return o, nil
}

// settings returns every server setting benchrig chooses, defaults first
// and Options.Settings over them.
func (o Options) settings(port int, sockDir string) map[string]string {
	s := map[string]string{
		"listen_addresses":        "127.0.0.1",
		"port":                    strconv.Itoa(port),
		"unix_socket_directories": sockDir,
		"max_connections":         strconv.Itoa(o.MaxConnections),
		"shared_buffers":          o.SharedBuffers,
		// Durability is not what is measured: a crash loses a throwaway
		// server. Off keeps disk flushes out of the server's CPU and latency.
		"fsync":              "off",
		"synchronous_commit": "off",
		"full_page_writes":   "off",
		// JIT compiles expressions of expensive plans; short key lookups
		// would only see its start-up cost, and unevenly.
		"jit": "off",
		// Autovacuum workers belong to the measured process tree and wake on
		// their own schedule; the dataset is vacuumed and analysed on every
		// reset instead, so samples start from the same state.
		"autovacuum":        "off",
		"log_destination":   "stderr",
		"logging_collector": "off",
	}
	maps.Copy(s, o.Settings)
	return s
}

// Server is a running ephemeral PostgreSQL server. Its methods are safe for
// concurrent use; Stop is idempotent.
type Server struct {
	opts     Options
	bins     Binaries
	as       runAs
	dir      string // everything the server owns: data, socket, log
	dataDir  string
	logPath  string
	port     int
	settings map[string]string
	version  string

	cmd    *exec.Cmd
	exited chan struct{} // closed when the postmaster has been reaped

	stopOnce  sync.Once
	stopErr   error
	hurry     chan struct{} // closed when a Stop caller's context ends
	hurryOnce sync.Once
	stopped   chan struct{} // closed when Stop has finished
}

// StartEphemeral initialises a fresh cluster in a new temporary directory
// and starts a server on it, listening on 127.0.0.1 only, then waits until it
// answers SELECT 1. When ctx ends or anything fails, whatever was started is
// stopped and the directory removed before the error returns.
func StartEphemeral(ctx context.Context, opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("postgres: start: %w", context.Cause(ctx))
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	bins, err := FindBinaries(ctx, opts.Bin)
	if err != nil {
		return nil, err
	}
	as, err := resolveUser(ctx, opts.User)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		s := &Server{opts: opts, bins: bins, as: as, hurry: make(chan struct{}), stopped: make(chan struct{})}
		if err := s.makeDir(); err != nil {
			return nil, err
		}
		if err := s.initdb(ctx); err != nil {
			s.removeDir()
			return nil, err
		}
		err := s.start(ctx)
		if err == nil {
			return s, nil
		}
		// A cancelled or failed start must leave nothing behind; a done ctx
		// makes Stop kill at once rather than wait for a fast shutdown.
		_ = s.Stop(ctx)
		// Another process may have taken the free port between probe and
		// bind: retry on a new one.
		if !errors.Is(err, errPortTaken) || opts.Port != 0 || attempt == 3 || ctx.Err() != nil {
			return nil, err
		}
	}
}

// makeDir creates the server's directory, owned by the server's user.
func (s *Server) makeDir() error {
	dir, err := tmpdir.New(s.opts.TempDir, "pg")
	if err != nil {
		return fmt.Errorf("postgres: create temporary directory in %s: %w", s.opts.TempDir, err)
	}
	s.dir = dir
	s.dataDir = filepath.Join(dir, "data")
	s.logPath = filepath.Join(dir, "server.log")
	if err := os.Chmod(dir, 0o700); err != nil {
		s.removeDir()
		return fmt.Errorf("postgres: chmod %s: %w", dir, err)
	}
	if err := s.as.chown(dir); err != nil {
		s.removeDir()
		return fmt.Errorf("postgres: give %s to user %q: %w", dir, s.as.name, err)
	}
	return nil
}

// env is the server's whole environment: nothing of benchrig's (no PG*
// variables, no secrets) leaks into it.
func (s *Server) env() []string {
	return []string{"PATH=/usr/bin:/bin", "LANG=C", "LC_ALL=C", "HOME=" + s.dir, "TZ=UTC"}
}

// initdb creates the cluster and writes its pg_hba.conf.
func (s *Server) initdb(ctx context.Context) error {
	args := []string{"-D", s.dataDir, "-U", s.opts.Superuser, "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"}
	if s.bins.Major >= 13 {
		args = append(args, "--no-instructions")
	}
	cmd := exec.CommandContext(ctx, s.bins.Initdb(), args...)
	cmd.Dir = s.dir
	cmd.Env = s.env()
	cmd.SysProcAttr = s.as.attr()
	// initdb runs postgres in bootstrap mode as its child: end the group.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("postgres: initdb %s: %w", s.dataDir, context.Cause(ctx))
		}
		return fmt.Errorf("postgres: initdb %s as user %q: %w\n%s", s.dataDir, s.userName(), err, tail(string(out), 20))
	}
	hba := "# benchrig ephemeral server: loopback only.\n" +
		"local all all trust\n" +
		fmt.Sprintf("host all %s 127.0.0.1/32 trust\n", s.opts.Superuser) +
		"host all all 127.0.0.1/32 scram-sha-256\n"
	path := filepath.Join(s.dataDir, "pg_hba.conf")
	if err := os.WriteFile(path, []byte(hba), 0o600); err != nil {
		return fmt.Errorf("postgres: write %s: %w", path, err)
	}
	if err := s.as.chown(path); err != nil {
		return fmt.Errorf("postgres: give %s to user %q: %w", path, s.as.name, err)
	}
	return nil
}

func (s *Server) userName() string {
	if s.as.name == "" {
		return fmt.Sprintf("uid %d", s.as.uid)
	}
	return s.as.name
}

// errPortTaken marks a start that failed because the port was in use.
var errPortTaken = errors.New("port already in use")

// start launches the postmaster and waits for readiness.
func (s *Server) start(ctx context.Context) error {
	port := s.opts.Port
	if port == 0 {
		p, err := freePort()
		if err != nil {
			return err
		}
		port = p
	}
	s.port = port
	s.settings = s.opts.settings(port, s.dir)
	args := []string{"-D", s.dataDir}
	for _, k := range sortedKeys(s.settings) {
		args = append(args, "-c", k+"="+s.settings[k])
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("postgres: create log %s: %w", s.logPath, err)
	}
	defer logf.Close()
	s.cmd = exec.Command(s.bins.Postgres(), args...)
	s.cmd.Dir = s.dir
	s.cmd.Env = s.env()
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = s.as.attr()
	s.exited = make(chan struct{})
	if err := forkLocked(s.cmd); err != nil {
		s.cmd = nil
		return fmt.Errorf("postgres: start %s as user %q: %w", s.bins.Postgres(), s.userName(), err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	return s.waitReady(ctx)
}

// forkLocked starts cmd from a goroutine locked to its OS thread. Pdeathsig
// fires when the forking thread exits, not the process; the runtime retires
// only threads whose goroutine exits while locked, so the thread survives and
// the signal fires only when benchrig itself dies.
func forkLocked(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return cmd.Start()
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("postgres: find a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// DSN returns the superuser's connection string, without a password (none
// is needed over loopback).
func (s *Server) DSN() string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable", url.PathEscape(s.opts.Superuser), s.port)
}

// PID returns the postmaster's PID: the root of the process tree to sample.
func (s *Server) PID() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Version returns the running server's version (SHOW server_version).
func (s *Server) Version() string { return s.version }

// Binaries returns the installation the server runs from.
func (s *Server) Binaries() Binaries { return s.bins }

// DataDir returns the cluster's data directory.
func (s *Server) DataDir() string { return s.dataDir }

// Dir returns the temporary directory holding the data directory, socket
// and log; Stop removes it.
func (s *Server) Dir() string { return s.dir }

// Port returns the TCP port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// LogPath returns the server's log file (stdout and stderr).
func (s *Server) LogPath() string { return s.logPath }

// Settings returns every setting benchrig gave the server, for provenance.
func (s *Server) Settings() map[string]string { return maps.Clone(s.settings) }

// Options returns the resolved options, defaults applied.
func (s *Server) Options() Options { return s.opts }
