package respserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	respproto "github.com/benchrig/benchrig/internal/protocol/resp"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/system"
)

// FieldStats returns a statistics source of exactly the INFO fields
// named (integers), for endpoints whose INFO is not redis-server's; nil
// when fields is empty.
func (s *RedisServer) FieldStats(fields []string) system.StatsSource {
	if len(fields) == 0 {
		return nil
	}
	return fieldStats{s: s, fields: fields}
}

type fieldStats struct {
	s      *RedisServer
	fields []string
}

// Snapshot reads INFO and returns the fields.
func (f fieldStats) Snapshot(ctx context.Context) (map[string]float64, error) {
	m, err := f.s.infoFields(ctx)
	if err != nil {
		return nil, f.s.wrap("INFO", err)
	}
	out := make(map[string]float64, len(f.fields))
	for _, k := range f.fields {
		v, ok := m[k]
		if !ok {
			return nil, fmt.Errorf("redis at %s: INFO has no field %q", f.s.addr, k)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("redis at %s: INFO field %q: %q is not an integer", f.s.addr, k, v)
		}
		out[k] = float64(n)
	}
	return out, nil
}

// CheckInfo checks, before the run, that INFO has every field of fields
// as an integer.
func (s *RedisServer) CheckInfo(ctx context.Context, fields []string) error {
	if len(fields) == 0 {
		return nil
	}
	_, err := fieldStats{s: s, fields: fields}.Snapshot(ctx)
	return err
}

// CheckReserve checks that the endpoint takes n connections at once: it
// opens them all (TLS and AUTH included), sends PING on each, then closes
// them. The error says how many were accepted.
func (s *RedisServer) CheckReserve(ctx context.Context, n int) error {
	conns := make([]*redisAdmin, 0, n)
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	for i := 0; i < n; i++ {
		c, err := s.dial(ctx)
		if err == nil {
			var rep string
			if rep, err = c.do("PING"); err == nil && rep != "PONG" {
				err = fmt.Errorf("PING answered %q", rep)
			}
			if err != nil {
				c.close()
			}
		}
		if err != nil {
			return fmt.Errorf("redis at %s: connection reserve: %d benchmark connections needed, connection %d failed: %w", s.addr, n, i+1, s.redactErr(err))
		}
		conns = append(conns, c)
	}
	return nil
}

// VerifySource is the pre-flight of a server that fills itself: for every
// key template, the probe ids of keySpace rows read with MGETs of at most
// batch keys (ProbeBatch) must equal the rows of table (key pk) read from
// PostgreSQL at dsn. The error names the first key that differs.
func (s *RedisServer) VerifySource(ctx context.Context, dsn secret.DSN, table, pk string, templates [][2]string, keySpace int64, batch int) (int, error) {
	ids := ProbeIDs(keySpace)
	for _, t := range templates {
		if err := s.VerifyAgainstPG(ctx, dsn, table, pk, t[0], t[1], ids, batch); err != nil {
			return 0, fmt.Errorf("pre-flight: %w", err)
		}
	}
	return len(ids), nil
}

// Templates lists the (key template, db) pairs of the resp paths of env's
// cells, each once, in plan order.
func Templates(env system.Env) [][2]string {
	var out [][2]string
	seen := map[[2]string]bool{}
	for _, c := range env.Cells {
		p := respproto.PathOf(env.Suite, c)
		if p == nil || p.Key == "" {
			continue
		}
		k := [2]string{p.Key, p.DB}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// ShortestTimeout is the shortest request timeout set on the RESP paths of
// env's cells (0 when none sets one): the bound of the server's PING, INFO
// and fill exchanges, so that a silent server fails its checks as fast as
// its requests would.
func ShortestTimeout(env system.Env) time.Duration {
	var min time.Duration
	for _, c := range env.Cells {
		p := respproto.PathOf(env.Suite, c)
		if p == nil || p.Timeout == nil || *p.Timeout <= 0 {
			continue
		}
		if t := time.Duration(*p.Timeout); min == 0 || t < min {
			min = t
		}
	}
	return min
}
