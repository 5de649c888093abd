package suite

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Assertion is one parsed assertion of a target or path, with the suite
// field it was written at (for messages: Suite.Where).
type Assertion struct {
	Expr  *Expr
	Field string
}

// Assertions returns the assertions every sample of cell c must satisfy:
// its target's, then its path's, parsed (Plan validated them).
func (s *Suite) Assertions(c Cell) []Assertion {
	var out []Assertion
	add := func(field string, list []string) {
		for i, a := range list {
			if e, err := ParseExpr(a); err == nil {
				out = append(out, Assertion{Expr: e, Field: index(field, i)})
			}
		}
	}
	if t := s.Targets[c.Target]; t != nil {
		add(child("targets", c.Target)+".assert", t.Assert)
	}
	if p := s.Paths[c.Path]; p != nil {
		add(child("paths", c.Path)+".assert", p.Assert)
	}
	return out
}

// PGStatNames are the statistics every sample of a postgres target's own
// protocol records (pg_stat_database deltas, the table's rows and
// revisions).
var PGStatNames = []string{"xact_commit", "xact_rollback", "blks_hit", "blks_read", "tup_returned", "tup_fetched",
	"tup_inserted", "tup_updated", "tup_deleted", "rows", "revisions"}

// RedisStatNames are the INFO fields every sample of a redis target
// records.
var RedisStatNames = []string{"keyspace_hits", "keyspace_misses", "total_commands_processed", "used_memory"}

// StatNames returns the statistics names a sample of protocol p on target
// t records for sure, and whether it may record more that only the server
// can tell (the columns of a postgres target's statistics query).
func StatNames(t *Target, p Protocol) (names map[string]bool, open bool) {
	names = map[string]bool{}
	add := func(list []string) {
		for _, n := range list {
			names[n] = true
		}
	}
	switch {
	case t.Postgres != nil:
		if p == nativeProtocol(KindPostgres) {
			add(PGStatNames)
		} else if t.Postgres.RESP != nil {
			add(t.Postgres.RESP.Info)
		}
		open = t.Postgres.Statistics != ""
	case t.Redis != nil:
		add(RedisStatNames)
		add(t.Redis.Info)
	}
	if info, ok := LookupProtocol(p); ok {
		add(info.ClientStats)
	}
	return names, open
}

// checkAssertions parses every assertion and checks its names against
// what the samples of each matrix pair record: the sample counters and
// the statistics of the pair's target and protocol. A name only a
// statistics query can provide is checked when the run starts (the
// server knows the query's columns), at the same position.
func (s *Suite) checkAssertions(reported map[string]bool) {
	l := s.loc
	parsed := map[string]*Expr{}
	parse := func(field string, list []string) {
		for i, a := range list {
			f := index(field, i)
			e, err := ParseExpr(a)
			var xe *ExprError
			switch {
			case errors.As(err, &xe):
				l.errOff(f, a, xe.Off, "assertion %q: %s", a, xe.Msg)
			case err != nil:
				l.errf(f, "assertion %q: %v", a, err)
			default:
				parsed[f] = e
			}
		}
	}
	for _, name := range sortedKeys(s.Targets) {
		if t := s.Targets[name]; t != nil {
			parse(child("targets", name)+".assert", t.Assert)
		}
	}
	for _, name := range sortedKeys(s.Paths) {
		if p := s.Paths[name]; p != nil {
			parse(child("paths", name)+".assert", p.Assert)
		}
	}
	for _, p := range s.Matrix.pairs() {
		t, path := s.Targets[p.target], s.Paths[p.path]
		if t == nil || path == nil || path.Protocol() == "" || t.Kind() == "" {
			continue
		}
		known, open := StatNames(t, path.Protocol())
		for _, c := range SampleCounters {
			known[c] = true
		}
		check := func(field string, n int) {
			for i := 0; i < n; i++ {
				f := index(field, i)
				e := parsed[f]
				if e == nil {
					continue
				}
				for _, u := range e.Names() {
					if known[u.Name] || open {
						continue
					}
					key := f + "\x00" + u.Name
					if reported[key] {
						continue
					}
					reported[key] = true
					l.errOff(f, e.Source, u.Off, "assertion %q: unknown name %q for %s samples of target %q; accepted: %s%s",
						e.Source, u.Name, path.Protocol(), p.target, strings.Join(sortedNames(known), ", "), openHint(t))
				}
			}
		}
		check(child("targets", p.target)+".assert", len(t.Assert))
		check(child("paths", p.path)+".assert", len(path.Assert))
	}
}

func openHint(t *Target) string {
	if t.Postgres != nil {
		return " (a postgres target's statistics query adds its columns)"
	}
	return ""
}

// statisticsRE is what a statistics query starts with: one read-only
// statement.
var statisticsRE = regexp.MustCompile(`(?is)^\s*(SELECT|WITH|TABLE|VALUES)\b`)

// checkStatistics checks a statistics query without a server: one
// statement that reads (SELECT, WITH, TABLE or VALUES), no parameters.
func (l *located) checkStatistics(field, q string) {
	if strings.TrimSpace(q) == "" {
		l.errf(field, "must not be empty; e.g. SELECT * FROM local_cache.stats()")
		return
	}
	if !statisticsRE.MatchString(q) {
		off := len(q) - len(strings.TrimLeft(q, " \t\r\n"))
		word := strings.Fields(q)[0]
		l.errOff(field, q, off, "a statistics query reads: it starts with SELECT, WITH, TABLE or VALUES, got %q (it runs before and after every sample)", word)
		return
	}
	body := strings.TrimRight(strings.TrimSpace(q), "; \t\r\n")
	if i := strings.IndexByte(body, ';'); i >= 0 {
		off := strings.Index(q, body) + i
		l.errOff(field, q, off, "one statement only: the first row of one query is read")
		return
	}
	if i := strings.Index(q, "$1"); i >= 0 {
		l.errOff(field, q, i, "takes no parameters ($1): it is run as written")
	}
}

// StatisticsError locates an error a server gave for a target's
// statistics query, or a name an assertion uses that the query does not
// return, for the run: "file:line:col: field: msg".
func (s *Suite) StatisticsError(target string, err error) error {
	f := child("targets", target) + ".postgres.statistics"
	q := ""
	if t := s.Targets[target]; t != nil && t.Postgres != nil {
		q = t.Postgres.Statistics
	}
	return fmt.Errorf("%s: %s: %w", s.Where(f, q, 0), f, err)
}

// AssertionError locates a problem with a name of an assertion found when
// the run starts: "file:line:col: field: msg", the column at the name.
func (s *Suite) AssertionError(a Assertion, name string, msg string) error {
	off := 0
	for _, u := range a.Expr.Names() {
		if u.Name == name {
			off = u.Off
		}
	}
	return fmt.Errorf("%s: %s: assertion %q: %s", s.Where(a.Field, a.Expr.Source, off), a.Field, a.Expr.Source, msg)
}
