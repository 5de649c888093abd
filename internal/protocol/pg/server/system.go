package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/pgephemeral"
	pgproto "github.com/benchrig/benchrig/internal/protocol/pg"
	"github.com/benchrig/benchrig/internal/protocol/pg/driver"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/target"
)

// System is a suite's PostgreSQL target: started (or reached) once for the
// whole run; the dataset is created, every pg path of the plan passes the
// pre-flight and the query plans are recorded. Each sample resets the
// dataset first.
type System struct {
	env     system.Env
	srv     *PGServer
	sidecar *target.Process // the sidecar, when one runs
	resp    *respEndpoint   // the RESP endpoint, when the target serves resp
}

var _ system.System = (*System)(nil)

// New is the system.Factory of postgres targets.
func init() { system.Register(suite.KindPostgres, New) }

func New(env system.Env) (system.System, error) { return &System{env: env}, nil }

// Options are the server options of a suite target for its cells.
func Options(env system.Env) (PGOptions, error) {
	pt := env.Target.Postgres
	opts := PGOptions{Ephemeral: pt.Ephemeral, DSN: secret.NewDSN(pt.DSN), Bin: suite.Expand(pt.BinDir, env.Params), MaxConnections: pt.MaxConnections,
		SharedBuffers: pt.SharedBuffers, Dataset: pgclient.Dataset{Table: pt.Table, Rows: system.DatasetRows(env.Suite, env.Cells, pgclient.DefaultRows),
			PayloadBytes: pt.PayloadBytes}, Settings: pt.Settings, InitSQL: pt.InitSQL}
	if pt.DSNEnv != "" {
		opts.DSN = secret.NewDSN(env.Getenv(pt.DSNEnv))
		if opts.DSN.IsZero() {
			return opts, fmt.Errorf("postgres.dsn_env: $%s is empty", pt.DSNEnv)
		}
	}
	if opts.Ephemeral && opts.MaxConnections == 0 {
		n := env.MaxConnections()
		if pt.Sidecar != nil {
			n *= 2 // a sidecar may hold a connection per client of its own
		}
		opts.MaxConnections = pgephemeral.MaxConnectionsFor(n)
	}
	return opts, nil
}

// Prepare starts or reaches the server and prepares every path of the
// plan at its largest batch.
func (p *System) Prepare(ctx context.Context) (result.Provenance, error) {
	opts, err := Options(p.env)
	if err != nil {
		return result.Provenance{}, err
	}
	sctx, cancel := ctx, context.CancelFunc(func() {})
	if !opts.Ephemeral {
		// A server that does not answer (a dropped SYN) must not hang the run.
		sctx, cancel = context.WithTimeout(ctx, ConnectTimeout)
	}
	srv, err := StartPG(sctx, opts)
	cancel()
	if err != nil {
		return result.Provenance{}, err
	}
	p.srv = srv
	info := srv.Info()
	where, proc := info.Name, fmt.Sprintf("postmaster pid %d", info.PID)
	if opts.Ephemeral {
		where = "ephemeral, data " + info.Dir
	}
	if info.PID == 0 {
		proc = "server process not visible here: no server figures"
	}
	p.env.Note("PostgreSQL %s · %s · %s\n", info.Version, where, proc)
	var paths []pg.Config
	seen := map[string]bool{}
	for _, c := range p.env.Cells {
		if c.Protocol != pgproto.Key {
			continue
		}
		pc := p.pathConfig(c, p.env.Suite.Seed)
		if pc.Workload.Batch = maxBatch(p.env.Cells, c.Path); seen[pc.Label()] {
			continue
		}
		seen[pc.Label()] = true
		paths = append(paths, pc)
	}
	if err := srv.Prepare(ctx, paths, p.maxConns(pgproto.Key)); err != nil {
		return result.Provenance{}, err
	}
	pt := p.env.Target.Postgres
	var addr string
	if pt.RESP != nil {
		if addr, err = p.respAddr(); err != nil {
			return result.Provenance{}, err
		}
	}
	if pt.Sidecar != nil {
		if err := p.startSidecar(ctx, addr); err != nil {
			return result.Provenance{}, err
		}
	}
	if pt.RESP != nil {
		if err := p.prepareRESP(ctx, addr); err != nil {
			return result.Provenance{}, err
		}
	}
	if err := p.probeStatistics(ctx); err != nil {
		return result.Provenance{}, err
	}
	info = srv.Info() // the settings and extensions as read back after init_sql
	prov := result.Provenance{Kind: suite.KindPostgres, Binary: info.Binary, SHA256: info.SHA256, Version: info.Version,
		Settings: info.Settings, Plans: srv.Plans()}
	if addr != "" {
		prov.Settings["resp"] = addr
	}
	p.sidecarInfo(&prov)
	return prov, nil
}

// ConnectTimeout bounds reaching a server by DSN.
const ConnectTimeout = 20 * time.Second

// maxBatch is the largest batch of a path among the cells: its pre-flight
// and recorded plan are those of that batch.
func maxBatch(cells []suite.Cell, path string) int {
	b := 1
	for _, c := range cells {
		if c.Path == path {
			b = max(b, c.Batch)
		}
	}
	return b
}

// Server is the prepared server (nil before Prepare).
func (p *System) Server() *PGServer { return p.srv }

// Close stops the sidecar, then an ephemeral server (a DSN server is only
// disconnected).
func (p *System) Close(ctx context.Context) error {
	err := p.stopSidecar(ctx)
	if p.srv == nil {
		return err
	}
	return errors.Join(err, p.srv.Stop(ctx))
}

// Spec resets the dataset and gives the sample its driver, the server to
// sample and the statistics source.
func (p *System) Spec(ctx context.Context, c suite.Cell, base system.Spec) (system.Spec, error) {
	q, r := pgproto.PathOf(p.env.Suite, c), p.respPath(c)
	if q == nil && (r == nil || p.resp == nil) {
		return base, system.Unsupported(p.env, c)
	}
	if err := p.srv.Reset(ctx); err != nil {
		return base, fmt.Errorf("reset the dataset: %w", err)
	}
	if err := p.srv.RunSQL(ctx, "postgres.reset_sql", p.env.Target.Postgres.ResetSQL); err != nil {
		return base, err
	}
	if r != nil {
		return p.respSpec(c, base)
	}
	ps, err := p.srv.Spec(p.pathConfig(c, base.Engine.Seed))
	if err != nil {
		return base, err
	}
	base.Driver, base.Attach, base.AttachInfo = ps.Driver, p.sampled(), ps.AttachInfo
	base.Stats = system.MergeStats(ps.Stats, p.userStats())
	base.DriverConfig, base.SystemConfig = ps.DriverConfig, ps.SystemConfig
	base.Judge = system.Judges(ps.Judge, base.Judge)
	// The pg paths read the keys 1 … rows of a table benchrig created or
	// checked (pg.Preflight): every one holds a row.
	system.DefaultMaxMiss(&base.Thresholds, p.env.Suite, c, true)
	return base, nil
}

// pathConfig is the pg driver config of cell c's path.
func (p *System) pathConfig(c suite.Cell, seed uint64) pg.Config {
	q := pgproto.PathOf(p.env.Suite, c)
	cfg := pg.Config{Path: pg.Path(q.Path), SQL: q.SQL, Table: q.Table, Workload: system.WorkloadConfig(p.env.Suite.Workloads[c.Workload], c.Batch, seed)}
	if cfg.Path == "" && cfg.SQL != "" {
		cfg.Path = pg.SQL
	}
	if cfg.Table == "" {
		cfg.Table = p.env.Target.Postgres.Table
	}
	if q.Batching != "" {
		cfg.BatchMode = pg.BatchMode(q.Batching)
	}
	cfg.Form, cfg.PlanCacheMode, cfg.SkipDecode = pg.Form(q.Form), pg.PlanCacheMode(q.PlanCacheMode), q.SkipDecode
	if q.Timeout != nil {
		cfg.Timeout = q.Timeout.D()
	}
	return cfg
}
