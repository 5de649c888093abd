package respserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/protocol/resp/driver"
	"github.com/benchrig/benchrig/internal/redisephemeral"
	wire "github.com/benchrig/benchrig/internal/resp"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/target"
)

// RedisOptions says which RESP system is under test: an ephemeral
// redis-server that benchrig starts and stops, or an existing server at Addr.
// It is plain data and holds no secret: the AUTH token is read from TokenEnv
// or TokenFile.
type RedisOptions struct {
	// Ephemeral starts a fresh redis-server on a free loopback port.
	Ephemeral bool `json:"ephemeral,omitempty"`
	// Addr is an existing server's host:port (not with Ephemeral).
	Addr string `json:"addr,omitempty"`
	// User is the ACL user for "AUTH user token" (default: AUTH token).
	User string `json:"user,omitempty"`
	// TokenEnv and TokenFile name where the AUTH token is (at most one).
	// With Ephemeral the token becomes the server's requirepass.
	TokenEnv  string `json:"token_env,omitempty"`
	TokenFile string `json:"token_file,omitempty"`
	// TLS configures TLS to an existing server (not with Ephemeral, whose
	// server speaks plain TCP on loopback).
	TLS resp.TLSConfig `json:"tls"`
	// MaxClients is the ephemeral server's maxclients (0: redis's default).
	MaxClients int `json:"max_clients,omitempty"`
	// Bin is the ephemeral server's executable (default redis-server).
	Bin string `json:"bin,omitempty"`
	// CPUs pins the ephemeral server's threads to this CPU list ("" none).
	CPUs string `json:"cpus,omitempty"`
	// AdminTimeout bounds each setup, INFO and check exchange (0, or more
	// than 10 s: 10 s); the system sets it to its paths' shortest request
	// timeout.
	AdminTimeout time.Duration `json:"-"`
}

// RedisServer is a RESP system under test that lives across samples: an
// ephemeral redis-server (started and stopped by benchrig) or an existing
// address. It satisfies Target; Measure samples it (when its process is
// known) but never stops it: Stop does, once all samples are done.
type RedisServer struct {
	opts    RedisOptions
	token   secret.Value
	addr    string
	tlsConf *tls.Config
	eph     *redisephemeral.Server
	// proc is the server process sampled: the ephemeral one, or the
	// process listening on a loopback Addr; nil when unknown.
	proc *target.Attached
	info result.TargetInfo
	// hasInfo is true when the server answers INFO with the statistics
	// fields (pg_local_cache's endpoint need not).
	hasInfo bool
}

var _ system.Target = (*RedisServer)(nil)

// StartRedis starts the ephemeral server, or checks that the server at Addr
// answers PING (after AUTH and TLS when configured). It fails with a clear
// error for an unreachable address, a refused AUTH (-WRONGPASS, -NOAUTH) or a
// peer that does not speak RESP; nothing is left running then.
func StartRedis(ctx context.Context, o RedisOptions) (*RedisServer, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	token, err := readRedisToken(o)
	if err != nil {
		return nil, err
	}
	s := &RedisServer{opts: o, token: token, addr: o.Addr}
	if o.TLS.Enabled {
		if s.tlsConf, err = redisTLSConfig(o.TLS, o.Addr); err != nil {
			return nil, err
		}
	}
	if o.Ephemeral {
		srv, err := redisephemeral.Start(ctx, redisephemeral.Options{Bin: o.Bin, Password: token, MaxClients: o.MaxClients})
		if err != nil {
			return nil, fmt.Errorf("start redis-server: %w", err)
		}
		s.eph, s.addr = srv, srv.Addr()
		if s.proc, err = target.Attach(srv.PID()); err != nil {
			s.Stop(context.Background())
			return nil, fmt.Errorf("redis-server pid %d: %w", srv.PID(), err)
		}
		if o.CPUs != "" {
			if err := pinProcess(srv.PID(), o.CPUs); err != nil {
				s.Stop(context.Background())
				return nil, fmt.Errorf("redis cpus %q: %w", o.CPUs, err)
			}
		}
	}
	if err := s.Ping(ctx); err != nil {
		s.Stop(context.Background())
		return nil, err
	}
	s.describe(ctx)
	return s, nil
}

// validate checks the options against each other.
func (o RedisOptions) validate() error {
	switch {
	case o.Ephemeral && o.Addr != "":
		return errors.New("redis: give ephemeral or addr, not both")
	case !o.Ephemeral && o.Addr == "":
		return errors.New("redis: give ephemeral or addr (host:port)")
	case o.TokenEnv != "" && o.TokenFile != "":
		return errors.New("redis: give token_env or token_file, not both")
	case o.User != "" && o.TokenEnv == "" && o.TokenFile == "":
		return errors.New("redis: user needs a token (token_env or token_file)")
	case o.MaxClients < 0:
		return fmt.Errorf("redis: max_clients must be ≥ 0, got %d", o.MaxClients)
	}
	if o.Ephemeral {
		if o.TLS.Enabled {
			return errors.New("redis: tls applies to an existing server (addr); the ephemeral server speaks plain TCP on loopback")
		}
		if o.CPUs != "" {
			if _, err := target.ParseCPUList(o.CPUs); err != nil {
				return fmt.Errorf("redis: cpus %q: %w", o.CPUs, err)
			}
		}
		return nil
	}
	if o.CPUs != "" {
		return errors.New("redis: cpus pins only an ephemeral server")
	}
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		return fmt.Errorf("redis: addr: want host:port, got %q", o.Addr)
	}
	return nil
}

// readRedisToken reads the AUTH token the way the RESP driver does.
func readRedisToken(o RedisOptions) (secret.Value, error) {
	switch {
	case o.TokenFile != "":
		b, err := os.ReadFile(o.TokenFile)
		if err != nil {
			return secret.Value{}, fmt.Errorf("redis: token file: %w", err)
		}
		t := strings.TrimRight(string(b), "\r\n")
		if t == "" {
			return secret.Value{}, fmt.Errorf("redis: token file %s is empty", o.TokenFile)
		}
		return secret.New(t), nil
	case o.TokenEnv != "":
		t, ok := os.LookupEnv(o.TokenEnv)
		if !ok || t == "" {
			return secret.Value{}, fmt.Errorf("redis: token env: environment variable %s is not set or empty", o.TokenEnv)
		}
		return secret.New(t), nil
	}
	return secret.Value{}, nil
}

// redisTLSConfig builds the client TLS configuration.
func redisTLSConfig(t resp.TLSConfig, addr string) (*tls.Config, error) {
	name := t.ServerName
	if name == "" {
		name, _, _ = net.SplitHostPort(addr)
	}
	c := &tls.Config{ServerName: name, InsecureSkipVerify: t.InsecureSkipVerify, MinVersion: tls.VersionTLS12} //nolint:gosec // the user asked for it
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("redis: tls ca file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("redis: tls ca file %s holds no PEM certificate", t.CAFile)
		}
		c.RootCAs = pool
	}
	return c, nil
}

// pinProcess sets the CPU affinity of every thread of pid.
func pinProcess(pid int, cpus string) error {
	list, err := proc.ParseCPUList(cpus)
	if err != nil {
		return err
	}
	return proc.Default().PinProcess(pid, list)
}

// describe reads the server's version and settings with INFO (a server
// without INFO gets no statistics), and finds the process of a server on a
// loopback address, to sample it.
func (s *RedisServer) describe(ctx context.Context) {
	s.info = result.TargetInfo{Name: s.addr, Kind: "redis", Settings: map[string]string{"addr": s.addr}}
	if s.eph != nil {
		s.info.Name, s.info.Binary, s.info.Version = "redis-server", s.eph.Bin(), s.eph.Version()
		s.info.CPUs = s.opts.CPUs
	}
	if s.opts.TLS.Enabled {
		s.info.Settings["tls"] = "on"
	}
	m, err := s.infoFields(ctx)
	var se *wire.Error
	switch {
	case errors.As(err, &se):
		// INFO refused: a RESP endpoint without it; no statistics.
		s.info.Settings["info"] = "unsupported: " + se.Prefix()
	case err != nil:
		// PING worked, so the peer is there: INFO is what it cannot do.
		s.info.Settings["info"] = "unsupported"
	default:
		_, statsErr := redisStatsFrom(m)
		s.hasInfo = statsErr == nil
		if v := m["redis_version"]; v != "" && s.info.Version == "" {
			s.info.Version = v
		}
		for _, k := range []string{"maxclients", "io_threads_active", "maxmemory_policy", "redis_mode"} {
			if v, ok := m[k]; ok {
				s.info.Settings[k] = v
			}
		}
	}
	if s.proc == nil {
		s.proc = s.localProcess()
	}
	if s.proc != nil {
		s.info.PID = s.proc.PID()
		if s.info.Binary == "" {
			if exe, err := proc.Default().Exe(s.proc.PID()); err == nil {
				s.info.Binary = exe
			}
		}
	}
	if s.info.Binary != "" {
		s.info.SHA256, _ = system.FileSHA256(s.info.Binary)
	}
}

// localProcess finds the process listening on a loopback Addr's port, to
// sample it without starting or stopping it; nil when there is none to see.
func (s *RedisServer) localProcess() *target.Attached {
	host, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		return nil
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil
	}
	pid, err := target.PIDListeningOn(p)
	if err != nil {
		return nil
	}
	a, err := target.Attach(pid)
	if err != nil {
		return nil
	}
	return a
}

// Addr returns the server's host:port.
func (s *RedisServer) Addr() string { return s.addr }

// PID returns the server process sampled, or 0 when it is not known (a
// remote address).
func (s *RedisServer) PID() int {
	if s.proc == nil {
		return 0
	}
	return s.proc.PID()
}

// Alive reports whether the server process still runs (true when it is not
// known).
func (s *RedisServer) Alive() bool { return s.proc == nil || s.proc.Alive() }

// Stop stops an ephemeral server and removes its directory; an existing
// server is left alone. It is idempotent.
func (s *RedisServer) Stop(ctx context.Context) error {
	if s.eph == nil {
		return nil
	}
	return s.eph.Stop(ctx)
}

// Info describes the server for a sample: kind "redis", version, process,
// binary and its SHA-256, and settings that matter. Each call returns a new
// copy.
func (s *RedisServer) Info() *result.TargetInfo {
	i := s.info
	i.Settings = make(map[string]string, len(s.info.Settings))
	for k, v := range s.info.Settings {
		i.Settings[k] = v
	}
	return &i
}

// Options returns the options the server was started with (no secret).
func (s *RedisServer) Options() RedisOptions { return s.opts }

// Ping checks that the server answers PING with PONG.
func (s *RedisServer) Ping(ctx context.Context) error {
	c, err := s.dial(ctx)
	if err != nil {
		return err
	}
	defer c.close()
	rep, err := c.do("PING")
	if err != nil {
		return s.wrap("PING", err)
	}
	if rep != "PONG" {
		return fmt.Errorf("redis at %s: PING answered %q, want PONG", s.addr, rep)
	}
	return nil
}

// redisStatsSource reads INFO for Measure's statistics deltas.
type redisStatsSource struct{ s *RedisServer }

// Snapshot reads keyspace_hits, keyspace_misses, total_commands_processed
// and used_memory.
func (r redisStatsSource) Snapshot(ctx context.Context) (map[string]float64, error) {
	m, err := r.s.infoFields(ctx)
	if err != nil {
		return nil, r.s.wrap("INFO", err)
	}
	return redisStatsFrom(m)
}

// Stats returns the server's statistics source (INFO: keyspace_hits,
// keyspace_misses, total_commands_processed, used_memory), from which
// Measure records after − before over each load window; nil when the server
// does not answer INFO. On a shared server the counters include other
// clients' commands, and total_commands_processed counts the INFO itself.
func (s *RedisServer) Stats() system.StatsSource {
	if !s.hasInfo {
		return nil
	}
	return redisStatsSource{s}
}

// redisStatNames are the INFO fields recorded per sample.
var redisStatNames = []string{"keyspace_hits", "keyspace_misses", "total_commands_processed", "used_memory"}

func redisStatsFrom(m map[string]string) (map[string]float64, error) {
	out := make(map[string]float64, len(redisStatNames))
	for _, k := range redisStatNames {
		v, ok := m[k]
		if !ok {
			return nil, fmt.Errorf("redis: INFO has no field %q", k)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("redis: INFO field %q: %q is not an integer", k, v)
		}
		out[k] = float64(n)
	}
	return out, nil
}

// infoFields runs INFO (default sections) and splits it into fields.
func (s *RedisServer) infoFields(ctx context.Context) (map[string]string, error) {
	c, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.close()
	text, err := c.do("INFO")
	if err != nil {
		return nil, err
	}
	m := make(map[string]string)
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

// Spec returns the run spec of one sample against the server: protocol
// "resp", a driver built from cfg (Addr, TLS and the token's source are the
// server's), Attach and AttachInfo (sampled, never stopped by Measure),
// Stats, a PING pre- and post-check, and the resolved driver and server
// options as JSON (the token is never in them). The caller sets
// Engine, Phases and Thresholds.
func (s *RedisServer) Spec(cfg resp.Config) (system.Spec, error) {
	cfg.Addr = s.addr
	cfg.TLS = s.opts.TLS
	cfg.Auth = resp.AuthConfig{User: s.opts.User, TokenEnv: s.opts.TokenEnv, TokenFile: s.opts.TokenFile}
	drv, err := resp.New(cfg)
	if err != nil {
		return system.Spec{}, err
	}
	ping := system.Check{Name: "PING " + s.addr, Run: s.Ping}
	return system.Spec{
		Protocol:     "resp",
		DriverConfig: system.JSON(drv.Config()),
		SystemConfig: system.JSON(s.opts),
		Driver:       drv,
		Attach:       s,
		AttachInfo:   s.Info(),
		Stats:        s.Stats(),
		PreChecks:    []system.Check{ping},
		PostChecks:   []system.Check{ping},
	}, nil
}
