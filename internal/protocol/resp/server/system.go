package redis

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/pgclient"
	respproto "github.com/benchrig/benchrig/internal/protocol/resp"
	"github.com/benchrig/benchrig/internal/protocol/resp/driver"
	"github.com/benchrig/benchrig/internal/protocol/resp/respserver"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/textclip"
)

// System is a suite's redis target: an ephemeral redis-server or an
// existing RESP endpoint, started (or reached) once for the whole run and,
// unless fill: false, filled under every key template the plan's resp
// paths use: with the demo rows, or cache-aside from a PostgreSQL table
// (fill_from_pg), verified against it when asked (verify_against_pg).
type System struct {
	env system.Env
	srv *respserver.RedisServer
	// refs are the rows filled, by key template, for validate_sampled.
	refs map[string]func(int64) ([]byte, bool)
}

var _ system.System = (*System)(nil)

// New is the system.Factory of redis targets.
func init() { system.Register(suite.KindRedis, New) }

func New(env system.Env) (system.System, error) {
	return &System{env: env, refs: map[string]func(int64) ([]byte, bool){}}, nil
}

// Options are the server options of a suite target for its cells.
func Options(env system.Env) respserver.RedisOptions {
	rt := env.Target.Redis
	o := respserver.RedisOptions{Ephemeral: rt.Ephemeral, Addr: rt.Addr, User: rt.User, TokenEnv: rt.TokenEnv, TokenFile: rt.TokenFile,
		Bin: suite.Expand(rt.Bin, env.Params), MaxClients: rt.MaxClients, CPUs: string(env.Target.CPUs)}
	if o.CPUs == "" && o.Ephemeral {
		o.CPUs = string(env.Suite.Placement.TargetCPUs)
	}
	if o.Ephemeral && o.MaxClients == 0 {
		o.MaxClients = env.MaxConnections() + 32
	}
	if t := rt.TLS; t != nil {
		o.TLS = resp.TLSConfig{Enabled: true, CAFile: t.CA, ServerName: t.ServerName}
	}
	o.AdminTimeout = respserver.ShortestTimeout(env)
	return o
}

// Prepare starts or reaches the server and fills it.
func (r *System) Prepare(ctx context.Context) (result.Provenance, error) {
	srv, err := respserver.StartRedis(ctx, Options(r.env))
	if err != nil {
		return result.Provenance{}, err
	}
	r.srv = srv
	if err := srv.CheckInfo(ctx, r.env.Target.Redis.Info); err != nil {
		return result.Provenance{}, fmt.Errorf("redis.info: %w", err)
	}
	if err := r.fill(ctx); err != nil {
		return result.Provenance{}, err
	}
	info := srv.Info()
	return result.Provenance{Kind: suite.KindRedis, Binary: info.Binary, SHA256: info.SHA256, Version: info.Version, Settings: info.Settings}, nil
}

// Server is the prepared server (nil before Prepare).
func (r *System) Server() *respserver.RedisServer { return r.srv }

func (r *System) note(format string, args ...any) { r.env.Note(format, args...) }

// fill writes the rows under every key template of the plan's resp paths.
func (r *System) fill(ctx context.Context) error {
	rt := r.env.Target.Redis
	rows := system.DatasetRows(r.env.Suite, r.env.Cells, pgclient.DefaultRows)
	if rt.Fill != nil && !*rt.Fill {
		return r.verifySelfFilled(ctx, rows)
	}
	var (
		dsn       secret.DSN
		table, pk string
	)
	if fp := rt.FillFromPG; fp != nil {
		table, pk = fp.Table, fp.PK
		if table == "" {
			table = pgclient.DefaultTable
		}
		if pk == "" {
			pk = "id"
		}
		if fp.Ephemeral {
			eph, err := respserver.StartFillSource(ctx, table, pk, rows)
			if err != nil {
				return err
			}
			defer func() {
				sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				_ = eph.Stop(sctx)
			}()
			dsn = secret.NewDSN(eph.DSN())
		} else if dsn = secret.NewDSN(r.env.Getenv(fp.DSNEnv)); dsn.IsZero() {
			return fmt.Errorf("redis.fill_from_pg.dsn_env: $%s is empty", fp.DSNEnv)
		}
	}
	done := map[string]bool{}
	for _, c := range r.env.Cells {
		p := respproto.PathOf(r.env.Suite, c)
		if p == nil || p.Key == "" {
			continue
		}
		tmpl := strings.ReplaceAll(p.Key, "{db}", p.DB)
		if done[tmpl] {
			continue
		}
		done[tmpl] = true
		start := time.Now()
		if dsn.IsZero() {
			n, err := r.srv.Fill(ctx, respserver.DemoRows(rows, pgclient.DefaultPayloadBytes), tmpl)
			if err != nil {
				return fmt.Errorf("fill %q: %w", textclip.String(tmpl), err)
			}
			r.note("Filled %d keys (%s, generated demo rows) in %s\n", n, textclip.String(tmpl), time.Since(start).Round(time.Millisecond))
			if p.ValidateSampled > 0 {
				ref, err := respserver.Reference(respserver.DemoRows(rows, pgclient.DefaultPayloadBytes), rows)
				if err != nil {
					return err
				}
				r.refs[tmpl] = ref
			}
			continue
		}
		n, err := r.srv.FillFromPG(ctx, dsn, table, pk, tmpl)
		if err != nil {
			return fmt.Errorf("fill %q from PostgreSQL: %w", textclip.String(tmpl), err)
		}
		r.note("Filled %d keys (%s) from table %s in %s\n", n, textclip.String(tmpl), table, time.Since(start).Round(time.Millisecond))
		if rt.VerifyAgainstPG {
			ids, batch := respserver.ProbeIDs(rows), respserver.ProbeBatch(r.env, rt.VerifyBatch)
			if err := r.srv.VerifyAgainstPG(ctx, dsn, table, pk, p.Key, p.DB, ids, batch); err != nil {
				return fmt.Errorf("pre-flight: %w", err)
			}
			r.note("Pre-flight: MGETs of %d keys (at most %d each) returned exactly the rows PostgreSQL returns for them\n", len(ids), batch)
		}
		if p.ValidateSampled > 0 {
			ref, err := respserver.Reference(respserver.PGRows(ctx, dsn, table, pk, rows), rows)
			if err != nil {
				return fmt.Errorf("read the reference rows: %w", err)
			}
			r.refs[tmpl] = ref
		}
	}
	return nil
}

// Close stops an ephemeral server (an address is only disconnected).
func (r *System) Close(ctx context.Context) error {
	if r.srv == nil {
		return nil
	}
	return r.srv.Stop(ctx)
}

// Spec gives a sample its driver (address, AUTH and TLS filled), the
// server to sample and its statistics plus the driver's own counters.
func (r *System) Spec(ctx context.Context, c suite.Cell, base system.Spec) (system.Spec, error) {
	p := respproto.PathOf(r.env.Suite, c)
	if p == nil {
		return base, system.Unsupported(r.env, c)
	}
	cfg := respproto.Config(r.env.Suite, p, c, base.Engine.Seed)
	if p.ValidateSampled > 0 {
		ref := r.refs[strings.ReplaceAll(p.Key, "{db}", p.DB)]
		if ref == nil {
			return base, fmt.Errorf("path %q: validate_sampled compares with the rows benchrig filled; the target has fill: false", c.Path)
		}
		cfg.Reference = ref
	}
	ps, err := r.srv.Spec(cfg)
	if err != nil {
		return base, fmt.Errorf("path %q: %w", c.Path, err)
	}
	base.Driver, base.Attach, base.AttachInfo = ps.Driver, ps.Attach, ps.AttachInfo
	base.Stats = respproto.Stats(ps.Driver.(*resp.Driver), system.MergeStats(ps.Stats, r.srv.FieldStats(r.env.Target.Redis.Info)))
	base.Judge = respproto.Judge
	base.PreChecks, base.PostChecks = ps.PreChecks, ps.PostChecks
	base.DriverConfig, base.SystemConfig = ps.DriverConfig, ps.SystemConfig
	rt := r.env.Target.Redis
	system.DefaultMaxMiss(&base.Thresholds, r.env.Suite, c, rt.Fill == nil || *rt.Fill)
	return base, nil
}

// verifySelfFilled runs verify_against_pg for a redis target with
// fill: false and source_pg.
func (r *System) verifySelfFilled(ctx context.Context, rows int64) error {
	rt := r.env.Target.Redis
	if !rt.VerifyAgainstPG || rt.SourcePG == nil {
		return nil
	}
	sp := rt.SourcePG
	dsn := secret.NewDSN(r.env.Getenv(sp.DSNEnv))
	if dsn.IsZero() {
		return fmt.Errorf("redis.source_pg.dsn_env: $%s is empty", sp.DSNEnv)
	}
	table, pk := sp.Table, sp.PK
	if table == "" {
		table = "items"
	}
	if pk == "" {
		pk = "id"
	}
	batch := respserver.ProbeBatch(r.env, rt.VerifyBatch)
	n, err := r.srv.VerifySource(ctx, dsn, table, pk, r.templates(), rows, batch)
	if err != nil {
		return err
	}
	r.note("Pre-flight: MGETs of %d keys (at most %d each) returned exactly the rows PostgreSQL returns for them\n", n, batch)
	return nil
}

// templates lists the (key template, db) of the plan's resp paths, once.
func (r *System) templates() [][2]string {
	return respserver.Templates(r.env)
}
