package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/pgephemeral"
	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/protocol/pg/driver"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/target"
)

// PGOptions configures a PostgreSQL system under test. Its JSON form and
// String never contain the DSN's password: the DSN's type hides it.
type PGOptions struct {
	// Ephemeral starts a throwaway server (initdb in a temporary
	// directory) that Stop removes. Exactly one of Ephemeral and DSN.
	Ephemeral bool `json:"ephemeral"`
	// DSN reaches an existing server (URL or key=value form). It is kept
	// in memory only; errors, logs and results show it redacted.
	DSN secret.DSN `json:"dsn,omitzero"`
	// Bin is the directory of the server binaries (ephemeral; default:
	// the newest installation found).
	Bin string `json:"bin,omitempty"`
	// MaxConnections and SharedBuffers size the ephemeral server (default
	// pgephemeral.DefaultMaxConnections and pgephemeral.DefaultSharedBuffers).
	MaxConnections int    `json:"max_connections,omitempty"`
	SharedBuffers  string `json:"shared_buffers,omitempty"`
	// Dataset is the benchmark table: created and reset on an ephemeral
	// server, checked on a DSN server.
	Dataset pgclient.Dataset `json:"dataset"`
	// Settings are further server settings of an ephemeral server.
	Settings map[string]string `json:"settings,omitempty"`
	// InitSQL runs once in Prepare, after the dataset is created and
	// before the pre-flight; not again after a Reset.
	InitSQL []string `json:"init_sql,omitempty"`
}

// String describes the server to use, DSN redacted.
func (o PGOptions) String() string {
	if o.Ephemeral {
		return "ephemeral postgres"
	}
	return "postgres " + o.DSN.String()
}

// PGServer is a PostgreSQL system under test that lives across samples:
// ephemeral (started and removed by benchrig) or an existing server reached
// by DSN. It satisfies Target: Measure samples its process tree (the
// postmaster and every backend) when it runs on this machine, and never
// stops it (give it as Spec.Attach); the caller calls Stop once at the end.
// Its methods are safe for concurrent use.
type PGServer struct {
	opts PGOptions
	eph  *pgephemeral.Server // nil for a DSN server
	dsn  secret.DSN
	proc *target.Attached // the postmaster, when visible; nil otherwise
	info result.TargetInfo

	mu     sync.Mutex // guards ctl, plans, writes
	ctl    *pgx.Conn  // the control connection
	plans  map[string]string
	writes bool // a prepared path writes: Reset reloads a DSN server's table
	// hasRevision caches whether the table has a revision column.
	hasRevision *bool
	stopped     bool // Stop was called

	stopOnce sync.Once
	stopErr  error
}

var _ system.Target = (*PGServer)(nil)

// StartPG starts an ephemeral server sized to opts.MaxConnections, or
// connects a control connection to opts.DSN, and reads the server's
// version and settings. Errors never contain the password. When it fails,
// nothing is left running.
func StartPG(ctx context.Context, opts PGOptions) (*PGServer, error) {
	opts.Dataset = opts.Dataset.WithDefaults()
	if err := opts.Dataset.Validate(); err != nil {
		return nil, err
	}
	switch {
	case opts.Ephemeral && !opts.DSN.IsZero():
		return nil, errors.New("postgres: give an ephemeral server or a DSN, not both")
	case !opts.Ephemeral && opts.DSN.IsZero():
		return nil, errors.New("postgres: give an ephemeral server or a DSN")
	}
	s := &PGServer{opts: opts, dsn: opts.DSN}
	if opts.Ephemeral {
		eph, err := pgephemeral.StartEphemeral(ctx, pgephemeral.Options{
			Bin: opts.Bin, MaxConnections: opts.MaxConnections, SharedBuffers: opts.SharedBuffers, Settings: opts.Settings,
		})
		if err != nil {
			return nil, err
		}
		s.eph, s.dsn = eph, secret.NewDSN(eph.DSN())
	} else if cfg, err := pgclient.ParseDSN(s.dsn.Reveal()); err != nil {
		return nil, err
	} else if err := pgclient.ProbeWire(ctx, cfg); err != nil {
		return nil, fmt.Errorf("%w (DSN %s)", err, s.dsn)
	}
	if err := s.connect(ctx); err != nil {
		_ = s.Stop(context.Background())
		return nil, err
	}
	return s, nil
}

// connect opens the control connection and fills the provenance.
func (s *PGServer) connect(ctx context.Context) error {
	ctl, err := pg.Connect(ctx, s.dsn)
	if err != nil {
		return err
	}
	s.ctl = ctl
	octx, cancel := context.WithTimeout(ctx, pg.OpTimeout)
	defer cancel()
	si, err := pgclient.ServerInfo(octx, ctl, s.changedSettings()...)
	if err != nil {
		return fmt.Errorf("%w (server %s)", err, s.dsn)
	}
	s.info = result.TargetInfo{
		Name: s.dsn.String(), Kind: "postgres", Version: si.Version, Settings: infoSettings(si),
	}
	pid := 0
	if s.eph != nil {
		pid = s.eph.PID()
		s.info.Binary = s.eph.Binaries().Postgres()
		s.info.Dir = s.eph.DataDir()
		s.info.LogPath = s.eph.LogPath()
	} else {
		pid = localPostmaster(ctl)
		if pid > 0 {
			s.info.Binary, _ = proc.Default().Exe(pid)
		}
	}
	if pid > 0 {
		if a, err := target.Attach(pid); err == nil {
			s.proc = a
			s.info.PID = pid
		}
	}
	if s.info.Binary != "" {
		s.info.SHA256, _ = system.FileSHA256(s.info.Binary)
	}
	return nil
}

// localPostmaster finds the postmaster of a DSN server that runs on this
// machine and is visible: the parent of the control connection's backend,
// confirmed by the port it listens on (or by the backend's name for a Unix
// socket). 0 when not found: best effort.
func localPostmaster(ctl *pgx.Conn) int {
	cfg := ctl.Config()
	local := strings.HasPrefix(cfg.Host, "/")
	if ip := net.ParseIP(cfg.Host); ip != nil && ip.IsLoopback() || cfg.Host == "localhost" {
		local = true
	}
	if !local {
		return 0
	}
	backend := int(ctl.PgConn().PID())
	comm, ppid, ok := procParent(backend)
	if !ok || !strings.HasPrefix(comm, "postgres") {
		return 0
	}
	if strings.HasPrefix(cfg.Host, "/") {
		return ppid
	}
	if pid, err := target.PIDListeningOn(int(cfg.Port)); err == nil && pid == ppid {
		return ppid
	}
	return 0
}

// procParent reads a process's name and parent from /proc/PID/stat.
func procParent(pid int) (comm string, ppid int, ok bool) {
	st, err := proc.Default().Stat(pid)
	if err != nil {
		return "", 0, false
	}
	return st.Comm, st.PPID, st.PPID > 0
}

// DSN returns the full connection string for drivers. It may hold a
// password, which only its Reveal shows.
func (s *PGServer) DSN() secret.DSN { return s.dsn }

// Options returns the options the server was started with (print them
// redacted: their String and JSON are).
func (s *PGServer) Options() PGOptions { return s.opts }

// PID returns the postmaster's PID, the root of the process tree to sample:
// the ephemeral server's, or a DSN server's when it runs on this machine
// and is visible; 0 otherwise.
func (s *PGServer) PID() int {
	if s.proc == nil {
		return 0
	}
	return s.proc.PID()
}

// Alive reports whether the postmaster still runs; true for a server whose
// process is not visible (it cannot be told).
func (s *PGServer) Alive() bool {
	if s.proc == nil {
		return true
	}
	return s.proc.Alive()
}

// LogPath returns the ephemeral server's log file ("" for a DSN server).
func (s *PGServer) LogPath() string { return s.info.LogPath }

// LogTail returns the last n lines of the ephemeral server's log.
func (s *PGServer) LogTail(n int) string {
	if s.info.LogPath == "" {
		return ""
	}
	b, err := readTail(s.info.LogPath, 64<<10)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// readTail reads at most the last max bytes of a file.
func readTail(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		if _, err := f.Seek(fi.Size()-max, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// Stop closes the control connection and, for an ephemeral server, stops
// it and removes its directory. A DSN server keeps running. Stop is
// idempotent.
func (s *PGServer) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		var errs []error
		s.mu.Lock()
		s.stopped = true
		if s.ctl != nil {
			cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = s.ctl.Close(cctx)
			cancel()
		}
		s.mu.Unlock()
		if s.eph != nil {
			if err := s.eph.Stop(ctx); err != nil {
				errs = append(errs, err)
			}
		}
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

// Info describes the server for every sample: kind "postgres", the
// redacted DSN as its name, version and settings as read back from the
// server (pgclient.InfoSettings such as fsync, shared_buffers,
// plan_cache_mode and shared_preload_libraries, every setting of
// PGOptions.Settings, and "extension.<name>": version of each installed
// extension; read again after init_sql), the postmaster's PID, and the
// binary with its SHA-256 when known.
func (s *PGServer) Info() *result.TargetInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := s.info
	info.Settings = make(map[string]string, len(s.info.Settings))
	for k, v := range s.info.Settings {
		info.Settings[k] = v
	}
	return &info
}

// Reset brings the dataset back to its initial state before a sample
// (pgclient.ResetDataset: TRUNCATE and reload, VACUUM (FREEZE, ANALYZE),
// warm scans). On a DSN server the table is the user's: it is reset only
// when a prepared path writes, and otherwise left alone.
func (s *PGServer) Reset(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ctlErr(); err != nil {
		return err
	}
	if s.eph == nil && !s.writes {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, DatasetTimeout)
	defer cancel()
	return pgclient.ResetDataset(ctx, s.ctl, s.opts.Dataset)
}

// DatasetTimeout bounds creating or resetting the dataset, and each
// init_sql statement: generous, for large tables, but a server that stops
// answering does not hold the run for ever.
const DatasetTimeout = 30 * time.Minute

// explain is pgclient.Explain on the control connection, bounded.
func (s *PGServer) explain(ctx context.Context, sql string, args ...any) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, pg.OpTimeout)
	defer cancel()
	return pgclient.Explain(ctx, s.ctl, sql, args...)
}

// ctlErr says why the control connection cannot be used: the server was
// stopped, or the connection was lost (a statement on it failed or timed
// out: pgx closes it). Called with s.mu held.
func (s *PGServer) ctlErr() error {
	switch {
	case s.ctl == nil:
		return errors.New("postgres: the server was stopped")
	case s.ctl.IsClosed() && s.stopped:
		return errors.New("postgres: the server was stopped")
	case s.ctl.IsClosed():
		return fmt.Errorf("postgres: the control connection to %s was lost (a statement on it failed or got no answer in time)", s.dsn)
	}
	return nil
}

// Stats returns a source of pg_stat_database readings for Spec.Stats (see
// pgStats): xact_commit, xact_rollback, blks_hit, blks_read, tup_returned,
// tup_fetched, tup_inserted, tup_updated, tup_deleted, plus rows (the
// table's row count) and revisions (the sum of its revision column, which
// every default update increments: an exact count of committed writes).
// Backends publish their counters lazily; Spec's source makes the
// sample's own backends publish theirs at the window's edges, this one
// cannot (see pgclient.StatsFlushDelay).
func (s *PGServer) Stats() system.StatsSource { return &pgStats{s: s} }

// Spec returns a run.Spec for one sample of path on this server: Protocol
// "pg", the driver (pg.New with the DSN, table and rows filled), Attach =
// the server (sampled, never stopped), AttachInfo = Info(), Stats that make
// the sample's backends publish their counters at the window's edges, and
// DriverConfig = the path's resolved config as JSON (DSN redacted) and
// SystemConfig = the server's options, and a Judge that records the
// plan_cache_mode the sample's connections ran with (PlansModeSetting; the
// plan counts are in Stats, see plans.go). The caller fills Engine, Phases,
// Thresholds, Key and the rest. Call Spec once per sample: its Stats take
// the before and after readings of one load window, and the after reading
// closes the sample's connections (the load is over by then).
func (s *PGServer) Spec(path pg.Config) (system.Spec, error) {
	d, err := pg.New(s.complete(path))
	if err != nil {
		return system.Spec{}, err
	}
	conf, err := json.Marshal(d.Config())
	if err != nil {
		return system.Spec{}, err
	}
	sd := &pgSampleDriver{Driver: d}
	return system.Spec{
		Protocol: "pg", DriverConfig: conf, SystemConfig: system.JSON(s.opts), Driver: sd,
		Attach: s, AttachInfo: s.Info(),
		Stats: &pgStats{s: s, d: sd}, Judge: sd.plans.judge,
	}, nil
}
