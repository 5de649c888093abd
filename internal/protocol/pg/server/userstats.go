package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
)

// The statistics query of a postgres target (postgres.statistics) is the
// server's own account of a sample, e.g. pg_local_cache's hits and misses:
// read before and after every load window on the control connection, the
// numeric columns of its first row become deltas beside the pg_stat ones.

// RunSQL runs statements in order on the control connection; what names
// the statement in errors is field[i].
func (s *PGServer) RunSQL(ctx context.Context, field string, stmts []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ctlErr(); err != nil {
		return err
	}
	for i, q := range stmts {
		qctx, cancel := context.WithTimeout(ctx, DatasetTimeout)
		_, err := s.ctl.Exec(qctx, q)
		cancel()
		if err != nil {
			return fmt.Errorf("%s[%d]: %w", field, i, err)
		}
	}
	return nil
}

// QueryStats runs the statistics query q and returns the numeric columns
// of its first row (integers, numeric, floating point; NULL reads as 0).
// Non-numeric columns are skipped; a query that returns no row, or no
// numeric column, is an error.
func (s *PGServer) QueryStats(ctx context.Context, q string) (map[string]float64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ctlErr(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, StatsTimeout)
	defer cancel()
	rows, err := s.ctl.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("the query returned no row")
	}
	vals, err := rows.Values()
	if err != nil {
		return nil, err
	}
	fields := rows.FieldDescriptions()
	out := map[string]float64{}
	for i, v := range vals {
		name := fields[i].Name
		f, numeric := numericValue(v, fields[i].DataTypeOID)
		if !numeric {
			continue
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("two columns are named %q", name)
		}
		out[name] = f
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("the query returned no numeric column")
	}
	return out, nil
}

// numericOIDs are the PostgreSQL types read as numbers.
var numericOIDs = map[uint32]bool{pgtype.Int2OID: true, pgtype.Int4OID: true, pgtype.Int8OID: true,
	pgtype.NumericOID: true, pgtype.Float4OID: true, pgtype.Float8OID: true, pgtype.OIDOID: false}

// numericValue converts a numeric column's value.
func numericValue(v any, oid uint32) (float64, bool) {
	if !numericOIDs[oid] {
		return 0, false
	}
	switch x := v.(type) {
	case nil:
		return 0, true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case pgtype.Numeric:
		f, err := x.Float64Value()
		if err != nil || !f.Valid || math.IsNaN(f.Float64) {
			return 0, true
		}
		return f.Float64, true
	}
	return 0, false
}

// userStats is the statistics source of the target's statistics query
// (nil without one).
func (p *System) userStats() system.StatsSource {
	q := p.env.Target.Postgres.Statistics
	if q == "" {
		return nil
	}
	return queryStats{s: p.srv, q: q}
}

type queryStats struct {
	s *PGServer
	q string
}

func (u queryStats) Snapshot(ctx context.Context) (map[string]float64, error) {
	m, err := u.s.QueryStats(ctx, u.q)
	if err != nil {
		return nil, fmt.Errorf("postgres.statistics: %w", err)
	}
	return m, nil
}

// probeStatistics runs the statistics query once before the run: an error
// of the server, a column named like a built-in statistic, or an
// assertion name that neither the query nor the samples provide is
// refused with its position in the suite.
func (p *System) probeStatistics(ctx context.Context) error {
	s, t := p.env.Suite, p.env.Target
	cols := map[string]float64{}
	if q := t.Postgres.Statistics; q != "" {
		var err error
		if cols, err = p.srv.QueryStats(ctx, q); err != nil {
			return s.StatisticsError(p.targetName(), err)
		}
	}
	for _, c := range p.env.Cells {
		known, _ := suite.StatNames(t, c.Protocol)
		for name := range cols {
			if known[name] {
				return s.StatisticsError(p.targetName(), fmt.Errorf("column %q is also a built-in statistic of %s samples; rename it with AS", name, c.Protocol))
			}
		}
		for _, counter := range suite.SampleCounters {
			known[counter] = true
		}
		for _, a := range s.Assertions(c) {
			for _, u := range a.Expr.Names() {
				if _, ok := cols[u.Name]; ok || known[u.Name] {
					continue
				}
				return s.AssertionError(a, u.Name, fmt.Sprintf("unknown name %q: the statistics query returns %s, and %s samples record %s",
					u.Name, names(cols), c.Protocol, strings.Join(sortedKeys(known), ", ")))
			}
		}
	}
	return nil
}

// targetName is the suite name of the target (the variant's name without
// its params).
func (p *System) targetName() string {
	name, _, _ := strings.Cut(p.env.Name, "[")
	return name
}

func names(m map[string]float64) string {
	if len(m) == 0 {
		return "nothing (no statistics query)"
	}
	return strings.Join(sortedKeys(m), ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
