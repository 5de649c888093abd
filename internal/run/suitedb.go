package run

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"

	pgdrv "github.com/benchrig/benchrig/internal/driver/pg"
	respdrv "github.com/benchrig/benchrig/internal/driver/resp"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/target/postgres"
	"github.com/benchrig/benchrig/internal/workload"
)

// workloadConfig maps a suite workload and a cell's batch onto the
// workload package: writes: 5 (percent) is a mixed workload writing every
// 20th operation; writes: 100 is updates only.
func workloadConfig(w *suite.Workload, batch int, seed uint64) workload.Config {
	wc := workload.Config{Kind: workload.Hot, Batch: batch, Seed: seed}
	if w == nil {
		return wc
	}
	wc.Kind, wc.Rows, wc.Hot, wc.ZipfS = workload.Kind(w.Kind), w.Rows, w.Hot, w.ZipfS
	switch {
	case w.Writes >= 100:
		wc.Kind = workload.Writes
	case w.Writes > 0:
		wc.Kind = workload.Mixed
		wc.WriteEvery = int(math.Round(100 / w.Writes))
	}
	return wc
}

// cellsOf returns the plan's cells on one target variant.
func (r *Runner) cellsOf(key string) []suite.Cell {
	var out []suite.Cell
	for _, c := range r.plan.Cells {
		if variantKey(c) == key {
			out = append(out, c)
		}
	}
	return out
}

// datasetRows is the largest row count the target's workloads use.
func (r *Runner) datasetRows(cells []suite.Cell) int64 {
	rows := int64(postgres.DefaultRows)
	for _, c := range cells {
		if w := r.s.Workloads[c.Workload]; w != nil && w.Rows > rows {
			rows = w.Rows
		}
	}
	return rows
}

func (r *Runner) pgConfig(c suite.Cell, seed uint64) pgdrv.Config {
	p := r.s.Paths[c.Path].PG
	cfg := pgdrv.Config{Path: pgdrv.Path(p.Path), SQL: p.SQL, Workload: workloadConfig(r.s.Workloads[c.Workload], c.Batch, seed)}
	if cfg.Path == "" && cfg.SQL != "" {
		cfg.Path = pgdrv.SQL
	}
	return cfg
}

// startPostgres starts (or reaches) a suite's PostgreSQL target once for the
// whole run: the dataset is created, every pg path of the plan passes the
// pre-flight, and the query plans are recorded. Each sample resets the
// dataset first.
func (r *Runner) startPostgres(ctx context.Context, key string, c suite.Cell, t *suite.Target) (*longLived, error) {
	cells := r.cellsOf(key)
	maxConns := 0
	for _, cc := range cells {
		maxConns = max(maxConns, cc.Connections)
	}
	pt := t.Postgres
	opts := PGOptions{Ephemeral: pt.Ephemeral, DSN: pt.DSN, Bin: pt.BinDir, MaxConnections: pt.MaxConnections,
		SharedBuffers: pt.SharedBuffers, Dataset: postgres.Dataset{Rows: r.datasetRows(cells)}}
	if pt.DSNEnv != "" {
		opts.DSN = os.Getenv(pt.DSNEnv)
		if opts.DSN == "" {
			return nil, fmt.Errorf("postgres.dsn_env: $%s is empty", pt.DSNEnv)
		}
	}
	if opts.Ephemeral && opts.MaxConnections == 0 {
		opts.MaxConnections = postgres.MaxConnectionsFor(maxConns)
	}
	srv, err := StartPG(ctx, opts)
	if err != nil {
		return nil, err
	}
	var paths []pgdrv.Config
	for _, cc := range cells {
		if p := r.s.Paths[cc.Path]; p != nil && p.PG != nil {
			paths = append(paths, r.pgConfig(cc, r.s.Seed))
		}
	}
	if err := srv.Prepare(ctx, paths, maxConns); err != nil {
		_ = srv.Stop(context.Background())
		return nil, err
	}
	info := srv.Info()
	pv := result.Provenance{Kind: suite.KindPostgres, Binary: info.Binary, SHA256: info.SHA256, Version: info.Version,
		Settings: info.Settings, Plans: srv.Plans()}
	return &longLived{
		provenance: pv,
		stop:       srv.Stop,
		spec: func(ctx context.Context, base Spec, c suite.Cell, p *suite.Path) (Spec, error) {
			if p.PG == nil {
				return base, fmt.Errorf("path %q is %s, but target %q is PostgreSQL", c.Path, p.Protocol(), key)
			}
			if err := srv.Reset(ctx); err != nil {
				return base, fmt.Errorf("reset the dataset: %w", err)
			}
			cfg := r.pgConfig(c, base.Engine.Seed)
			ps, err := srv.Spec(cfg)
			if err != nil {
				return base, err
			}
			return merge(base, ps, c), nil
		},
	}, nil
}

// startRedis starts (or reaches) a suite's redis target once for the whole
// run and fills it with the demo rows (JSON, the dataset's shape) under
// every key template the plan's resp paths use, so MGET hits.
func (r *Runner) startRedis(ctx context.Context, key string, c suite.Cell, t *suite.Target) (*longLived, error) {
	cells := r.cellsOf(key)
	maxConns := 0
	for _, cc := range cells {
		maxConns = max(maxConns, cc.Connections)
	}
	rt := t.Redis
	opts := RedisOptions{Ephemeral: rt.Ephemeral, Addr: rt.Addr, TokenEnv: rt.TokenEnv, Bin: rt.Bin,
		MaxClients: maxConns + 32, CPUs: string(t.CPUs)}
	if !opts.Ephemeral {
		opts.MaxClients = 0
	}
	srv, err := StartRedis(ctx, opts)
	if err != nil {
		return nil, err
	}
	rows := r.datasetRows(cells)
	filled := map[string]bool{}
	for _, cc := range cells {
		p := r.s.Paths[cc.Path]
		if p == nil || p.RESP == nil || filled[p.RESP.Key] || p.RESP.Key == "" {
			continue
		}
		filled[p.RESP.Key] = true
		if _, err := srv.Fill(ctx, DemoRows(rows, postgres.DefaultPayloadBytes), p.RESP.Key); err != nil {
			_ = srv.Stop(context.Background())
			return nil, fmt.Errorf("fill %q: %w", p.RESP.Key, err)
		}
	}
	info := srv.Info()
	pv := result.Provenance{Kind: suite.KindRedis, Binary: info.Binary, SHA256: info.SHA256, Version: info.Version, Settings: info.Settings}
	return &longLived{
		provenance: pv,
		stop:       srv.Stop,
		spec: func(ctx context.Context, base Spec, c suite.Cell, p *suite.Path) (Spec, error) {
			if p.RESP == nil {
				return base, fmt.Errorf("path %q is %s, but target %q is redis", c.Path, p.Protocol(), key)
			}
			w := workloadConfig(r.s.Workloads[c.Workload], c.Batch, base.Engine.Seed).WithDefaults()
			cfg := respdrv.DefaultConfig()
			cfg.Command, cfg.KeyTemplate, cfg.Value, cfg.Batch = p.RESP.Command, p.RESP.Key, p.RESP.Value, c.Batch
			if cfg.KeyTemplate == "" {
				cfg.KeyTemplate = respdrv.DefaultConfig().KeyTemplate
			}
			cfg.KeySpace = w.Hot
			if w.Kind != workload.Hot {
				cfg.KeySpace = w.Rows
			}
			ps, err := srv.Spec(cfg)
			if err != nil {
				return base, err
			}
			return merge(base, ps, c), nil
		},
	}, nil
}

// merge completes a suite sample's spec with what a server's Spec gives
// (driver, attach, stats, checks), recording the cell beside the driver's
// configuration.
func merge(base, ps Spec, c suite.Cell) Spec {
	base.Protocol, base.Driver, base.Attach, base.AttachInfo, base.Stats = ps.Protocol, ps.Driver, ps.Attach, ps.AttachInfo, ps.Stats
	base.PreChecks, base.PostChecks = ps.PreChecks, ps.PostChecks
	base.Config, _ = json.Marshal(struct {
		Cell   suite.Cell      `json:"cell"`
		Engine load.Config     `json:"engine"`
		Driver json.RawMessage `json:"driver"`
	}{c, base.Engine, ps.Config})
	return base
}
