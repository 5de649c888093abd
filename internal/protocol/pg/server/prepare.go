package postgres

import (
	"context"
	"fmt"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/protocol/pg/driver"
)

// Prepare makes the server ready for the paths: it creates the dataset on
// an ephemeral server, checks that maxConns benchmark connections fit
// (pgclient.CheckReserve), runs pg.Preflight over every path (the table
// exists with an integer primary key and the dataset's rows, statements
// prepare, and every read path returns the same rows for the probe
// batches), and stores the EXPLAIN plan of each path's statements. Paths
// are completed as Spec does (DSN, table, rows).
func (s *PGServer) Prepare(ctx context.Context, paths []pg.Config, maxConns int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ctlErr(); err != nil {
		return err
	}
	if s.eph != nil {
		dctx, cancel := context.WithTimeout(ctx, DatasetTimeout)
		err := pgclient.CreateDataset(dctx, s.ctl, s.opts.Dataset)
		cancel()
		if err != nil {
			return err
		}
	}
	for i, q := range s.opts.InitSQL {
		qctx, cancel := context.WithTimeout(ctx, DatasetTimeout)
		_, err := s.ctl.Exec(qctx, q)
		cancel()
		if err != nil {
			return fmt.Errorf("postgres.init_sql[%d]: %w", i, err)
		}
	}
	if err := s.refreshInfo(ctx); err != nil {
		return err
	}
	octx, cancel := context.WithTimeout(ctx, pg.OpTimeout)
	err := pgclient.CheckReserve(octx, s.ctl, maxConns)
	cancel()
	if err != nil {
		return err
	}
	done := make([]pg.Config, len(paths))
	for i, p := range paths {
		done[i] = s.complete(p)
	}
	paths = done
	if err := pg.Preflight(ctx, s.dsn, paths); err != nil {
		return err
	}
	plans := map[string]string{}
	writes := false
	for _, p := range paths {
		d, err := pg.New(p)
		if err != nil {
			return err
		}
		label := d.Config().Label()
		for n := 2; plans[label] != ""; n++ {
			label = fmt.Sprintf("%s #%d", d.Config().Label(), n)
		}
		wl := d.Workload()
		_, keys := wl.Keys(0, make([]int64, 0, wl.Batch()))
		if sql := d.ReadSQL(); sql != "" && len(keys) > 0 {
			args := d.ReadArgs(keys)
			if d.Config().Path == pg.PreparedOne {
				args = d.ReadArgs(keys[:1])
			}
			if plans[label], err = s.explain(ctx, sql, args...); err != nil {
				return err
			}
		}
		if sql := d.UpdateSQL(); sql != "" {
			writes = true
			if plans[label+" update"], err = s.explain(ctx, sql, int64(1)); err != nil {
				return err
			}
		}
	}
	s.plans, s.writes = plans, s.writes || writes
	return nil
}

// complete fills a path's DSN, and its table and rows from the dataset
// when unset.
func (s *PGServer) complete(p pg.Config) pg.Config {
	p.DSN = s.dsn
	if p.Table == "" {
		p.Table = s.opts.Dataset.Table
	}
	if p.Workload.Rows == 0 {
		p.Workload.Rows = s.opts.Dataset.Rows
	}
	return p
}

// Plans returns the EXPLAIN (FORMAT JSON) text of each prepared path's
// read statement by path label ("any", "prepared-one/pipeline"), and of
// its update statement as "<label> update", as Prepare stored them.
func (s *PGServer) Plans() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.plans))
	for k, v := range s.plans {
		out[k] = v
	}
	return out
}
