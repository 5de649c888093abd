package pg

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// PlanCount is how a prepared statement was planned: the executions that
// ran a generic (cached) plan and those planned for their parameters.
type PlanCount struct {
	Generic int64 `json:"generic_plans"`
	Custom  int64 `json:"custom_plans"`
}

// Plans is what pg_prepared_statements says of benchrig's statements,
// summed over connections: per statement role ("read", "update") the plan
// counts since the previous reading of each connection (or since it
// opened), and the plan_cache_mode the connections ran with.
// pg_prepared_statements is per backend, so it is read on every benchmark
// connection (PlanStats on a Conn, or Backends.PlanStats on an event loop).
type Plans struct {
	// Mode is the connections' plan_cache_mode ("auto",
	// "force_generic_plan", "force_custom_plan"); differing modes are
	// listed, sorted, joined by ",".
	Mode string `json:"plan_cache_mode"`
	// Statements holds the counts per statement role.
	Statements map[string]PlanCount `json:"statements"`
	// Conns is the number of connections read.
	Conns int `json:"connections"`
}

// Add adds q's counts and connections to p, merging the modes.
func (p *Plans) Add(q Plans) {
	if p.Statements == nil {
		p.Statements = make(map[string]PlanCount)
	}
	for k, v := range q.Statements {
		s := p.Statements[k]
		s.Generic += v.Generic
		s.Custom += v.Custom
		p.Statements[k] = s
	}
	p.Conns += q.Conns
	p.Mode = mergeModes(p.Mode, q.Mode)
}

// mergeModes joins two comma-separated mode lists, sorted, without
// duplicates.
func mergeModes(a, b string) string {
	var all []string
	for _, s := range []string{a, b} {
		if s != "" {
			all = append(all, strings.Split(s, ",")...)
		}
	}
	sort.Strings(all)
	return strings.Join(slices.Compact(all), ",")
}

// AlwaysCustom lists, sorted, the statements that ran and were
// custom-planned on every execution (no generic plan at all): the planner
// ran once per call, which reports should flag.
func (p Plans) AlwaysCustom() []string {
	var out []string
	for k, v := range p.Statements {
		if v.Custom > 0 && v.Generic == 0 {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// planQuery reads the counts of benchrig's statements and the mode, one row
// per statement (one row of NULL counts when none is prepared).
const planQuery = "SELECT current_setting('plan_cache_mode'), s.name, s.generic_plans, s.custom_plans " +
	"FROM (SELECT 1) x LEFT JOIN pg_prepared_statements s ON s.name IN ('" + stmtRead + "', '" + stmtUpdate + "') ORDER BY 2"

// roles names the statements in Plans.
var roles = map[string]string{stmtRead: "read", stmtUpdate: "update"}

// parsePlans reads planQuery's rows (text values, nil for NULL) into
// cumulative counts per role and the mode.
func parsePlans(rows [][][]byte) (string, map[string]PlanCount, error) {
	counts := make(map[string]PlanCount)
	mode := ""
	for _, r := range rows {
		if len(r) != 4 {
			return "", nil, fmt.Errorf("pg: pg_prepared_statements: %d columns, want 4", len(r))
		}
		mode = string(r[0])
		if r[1] == nil {
			continue
		}
		g, err1 := strconv.ParseInt(string(r[2]), 10, 64)
		c, err2 := strconv.ParseInt(string(r[3]), 10, 64)
		if err1 != nil || err2 != nil {
			return "", nil, fmt.Errorf("pg: pg_prepared_statements: counts %q, %q are not integers", r[2], r[3])
		}
		counts[roles[string(r[1])]] = PlanCount{Generic: g, Custom: c}
	}
	return mode, counts, nil
}

// planDelta turns one connection's cumulative reading into a Plans of the
// counts since its previous reading, which it then remembers.
func (c *Conn) planDelta(mode string, now map[string]PlanCount) Plans {
	p := Plans{Mode: mode, Statements: make(map[string]PlanCount), Conns: 1}
	for k, v := range now {
		b := c.planBase[k]
		p.Statements[k] = PlanCount{Generic: v.Generic - b.Generic, Custom: v.Custom - b.Custom}
	}
	c.planBase = now
	return p
}

// PlanStats reads this connection's plan counts (see Plans), in the simple
// protocol so that the reading prepares nothing. Not while Do runs.
func (c *Conn) PlanStats(ctx context.Context) (Plans, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := opCtx(ctx, OpTimeout)
	defer cancel()
	rows, err := c.pg.Query(ctx, planQuery, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return Plans{}, fmt.Errorf("pg: read pg_prepared_statements: %w", err)
	}
	var raw [][][]byte
	for rows.Next() {
		var r [][]byte
		for _, v := range rows.RawValues() {
			if v != nil {
				v = append([]byte{}, v...)
			}
			r = append(r, v)
		}
		raw = append(raw, r)
	}
	if err := rows.Err(); err != nil {
		return Plans{}, fmt.Errorf("pg: read pg_prepared_statements: %w", err)
	}
	mode, counts, err := parsePlans(raw)
	if err != nil {
		return Plans{}, err
	}
	return c.planDelta(mode, counts), nil
}
