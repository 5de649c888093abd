package suite

import (
	"math"
	"slices"
	"strings"

	"github.com/benchrig/benchrig/internal/load"
)

// Matrix lists what to measure. The variants compared are either
// Targets × Paths × Workloads (every pair must match in protocol) or the
// explicit Cases; each target's Params multiply them. Every variant is
// measured at every combination of Connections, Batches, Rates and Pipeline.
type Matrix struct {
	// Targets names the targets to measure, in order.
	Targets []string `json:"targets,omitempty"`
	// Paths names the paths sent to every target, in order.
	Paths []string `json:"paths,omitempty"`
	// Workloads names the workloads of pg and RESP paths, in order; none
	// leaves the key sequence to the driver's default.
	Workloads []string `json:"workloads,omitempty"`
	// Cases pair targets with paths (and workloads) explicitly, for suites
	// whose targets speak different protocols. Exclusive with Targets,
	// Paths and Workloads.
	Cases []Case `json:"cases,omitempty"`
	// Connections are the numbers of connections (≥ 1).
	Connections []int `json:"connections"`
	// Batches are keys per request of pg and RESP paths (default [1]).
	Batches []int `json:"batches"`
	// Rates are constant arrival rates in requests per second; none means
	// closed loop.
	Rates []float64 `json:"rates,omitempty"`
	// Pipeline is the number of requests in flight per connection (default
	// [1]).
	Pipeline []int `json:"pipeline"`
}

// Case is one target–path pair of a matrix, with an optional workload.
type Case struct {
	// Target, Path and Workload name definitions of the suite.
	Target   string `json:"target"`
	Path     string `json:"path"`
	Workload string `json:"workload,omitempty"`
	// Batches, if set, measures this case at these of the matrix's
	// batches only (e.g. a prepared one-key statement at 1 key).
	Batches []int `json:"batches,omitempty"`
	// Connections and Rates, if set, measure this case at these of the
	// matrix's connection counts and rates only, so that a path runs only
	// where its label means what it says.
	Connections []int     `json:"connections,omitempty"`
	Rates       []float64 `json:"rates,omitempty"`
}

// pair is one target–path–workload triple of the matrix, before the
// target's params multiply it, with the fields that named each part.
type pair struct {
	target, path, workload string
	tf, pf, wf             string
	// batches, connections and rates, if set, are the only levels of the
	// pair on that axis (Case.Batches, Case.Connections, Case.Rates).
	batches, connections []int
	rates                []float64
}

// pairs lists the matrix's triples in YAML order: Targets × Paths ×
// Workloads (target outermost) or the Cases as listed.
func (m *Matrix) pairs() []pair {
	var out []pair
	if len(m.Cases) > 0 {
		for i, c := range m.Cases {
			f := index("matrix.cases", i)
			p := pair{target: c.Target, path: c.Path, workload: c.Workload, tf: f + ".target", pf: f + ".path",
				batches: c.Batches, connections: c.Connections, rates: c.Rates}
			if c.Workload != "" {
				p.wf = f + ".workload"
			}
			out = append(out, p)
		}
		return out
	}
	workloads, wfields := m.Workloads, make([]string, len(m.Workloads))
	for i := range wfields {
		wfields[i] = index("matrix.workloads", i)
	}
	if len(workloads) == 0 {
		workloads, wfields = []string{""}, []string{""}
	}
	for ti, t := range m.Targets {
		for pi, p := range m.Paths {
			for wi, w := range workloads {
				out = append(out, pair{target: t, path: p, workload: w,
					tf: index("matrix.targets", ti), pf: index("matrix.paths", pi), wf: wfields[wi]})
			}
		}
	}
	return out
}

func (s *Suite) validateMatrix() {
	l, m := s.loc, &s.Matrix
	crossSet := setNames([]string{"targets", "paths", "workloads"},
		l.present("matrix.targets"), l.present("matrix.paths"), l.present("matrix.workloads"))
	if len(m.Cases) > 0 || l.present("matrix.cases") {
		if len(crossSet) > 0 {
			l.errf("matrix.cases", "cases and %s are exclusive: list target–path pairs in cases, or give targets × paths", strings.Join(crossSet, ", "))
		}
		if len(m.Cases) == 0 {
			l.errf("matrix.cases", "empty: the matrix has no cells; list at least one {target, path} case")
		}
		s.checkCases()
	} else {
		checkRefs(l, "matrix.targets", m.Targets, s.Targets, "target", "targets", true)
		checkRefs(l, "matrix.paths", m.Paths, s.Paths, "path", "paths", true)
		checkRefs(l, "matrix.workloads", m.Workloads, s.Workloads, "workload", "workloads", false)
	}
	l.checkInts("matrix.connections", m.Connections, 1, "connection count")
	l.checkInts("matrix.batches", m.Batches, 1, "batch size")
	l.checkInts("matrix.pipeline", m.Pipeline, 1, "pipeline depth")
	l.checkRates("matrix.rates", m.Rates)
	reported := map[string]bool{}
	for _, p := range m.pairs() {
		s.checkPair(p, reported)
	}
	s.checkConnectionReserve(reported)
	s.checkAssertions(reported)
}

// pgReserved is what an ephemeral PostgreSQL server needs beyond the
// benchmark's connections: one admin connection and the default
// superuser_reserved_connections (3).
const pgReserved = 4

// checkConnectionReserve checks that an ephemeral PostgreSQL server with a
// fixed max_connections can take the largest connection count of the matrix.
func (s *Suite) checkConnectionReserve(reported map[string]bool) {
	most := 0
	for _, c := range s.Matrix.Connections {
		most = max(most, c)
	}
	for _, p := range s.Matrix.pairs() {
		t, path := s.Targets[p.target], s.Paths[p.path]
		if t == nil || t.Postgres == nil || path == nil || path.Protocol() != nativeProtocol(KindPostgres) {
			continue
		}
		f := child("targets", p.target) + ".postgres.max_connections"
		if mc := t.Postgres.MaxConnections; mc > 0 && mc < most+pgReserved && !reported[f] {
			reported[f] = true
			s.loc.errf(f, "must be ≥ %d: the matrix opens up to %d connections, plus 1 admin connection and 3 reserved for superusers", most+pgReserved, most)
		}
	}
}

// checkRefs checks a list of names referring to the definitions in defs.
func checkRefs[V any](l *located, field string, names []string, defs map[string]V, what, plural string, required bool) {
	if len(names) == 0 {
		switch {
		case l.present(field):
			l.errf(field, "empty: the matrix has no cells; list at least one %s", what)
		case required:
			l.errf(field, "required: the %s to measure (%s)", plural, defined(defs, plural))
		}
		return
	}
	seen := map[string]int{}
	for i, n := range names {
		f := index(field, i)
		if j, dup := seen[n]; dup {
			l.errf(f, "duplicate %s %q (also at [%d])", what, n, j)
			continue
		}
		seen[n] = i
		if _, ok := defs[n]; !ok {
			l.errf(f, "unknown %s %q; %s", what, n, defined(defs, plural))
		}
	}
}

func (s *Suite) checkCases() {
	l := s.loc
	type caseKey struct{ target, path, workload string }
	seen := map[caseKey]int{}
	for i, c := range s.Matrix.Cases {
		f := index("matrix.cases", i)
		if c.Target == "" {
			l.errf(f+".target", "required: the target of this case (%s)", defined(s.Targets, "targets"))
		} else if _, ok := s.Targets[c.Target]; !ok {
			l.errf(f+".target", "unknown target %q; %s", c.Target, defined(s.Targets, "targets"))
		}
		if c.Path == "" {
			l.errf(f+".path", "required: the path of this case (%s)", defined(s.Paths, "paths"))
		} else if _, ok := s.Paths[c.Path]; !ok {
			l.errf(f+".path", "unknown path %q; %s", c.Path, defined(s.Paths, "paths"))
		}
		if c.Workload != "" {
			if _, ok := s.Workloads[c.Workload]; !ok {
				l.errf(f+".workload", "unknown workload %q; %s", c.Workload, defined(s.Workloads, "workloads"))
			}
		}
		k := caseKey{c.Target, c.Path, c.Workload}
		if j, dup := seen[k]; dup {
			l.errf(f, "duplicate case (also at [%d])", j)
		}
		seen[k] = i
		s.checkCaseBatches(f+".batches", c.Batches)
		s.checkCaseInts(f+".connections", c.Connections, s.Matrix.Connections, "connection count", "matrix.connections")
		s.checkCaseRates(f+".rates", c.Rates)
	}
}

// checkCaseInts checks a case's list on an integer axis: each value one of
// the matrix's (of, named by ofField), once.
func (s *Suite) checkCaseInts(field string, vs, of []int, what, ofField string) {
	l := s.loc
	if vs == nil && !l.present(field) {
		return
	}
	if len(vs) == 0 {
		l.errf(field, "empty: the case would have no cells; list some of %s or remove it", ofField)
	}
	seen := map[int]int{}
	for i, v := range vs {
		if !containsInt(of, v) {
			l.errf(index(field, i), "%s %d is not one of %s %v; a case measures some of the matrix's levels", what, v, ofField, of)
		}
		if j, dup := seen[v]; dup {
			l.errf(index(field, i), "duplicate value %d (also at [%d])", v, j)
		}
		seen[v] = i
	}
}

// checkCaseRates checks a case's rates: each one of matrix.rates, once.
func (s *Suite) checkCaseRates(field string, rs []float64) {
	l := s.loc
	if rs == nil && !l.present(field) {
		return
	}
	switch {
	case len(s.Matrix.Rates) == 0:
		l.errf(field, "matrix.rates is empty (the matrix runs closed loop): a case picks some of matrix.rates; add them there or remove this list")
		return
	case len(rs) == 0:
		l.errf(field, "empty: the case would have no cells; list some of matrix.rates or remove it")
	}
	seen := map[float64]int{}
	for i, r := range rs {
		if !slices.Contains(s.Matrix.Rates, r) {
			l.errf(index(field, i), "rate %s is not one of matrix.rates %v; a case measures some of the matrix's rates", fmtFloat(r), s.Matrix.Rates)
		}
		if j, dup := seen[r]; dup {
			l.errf(index(field, i), "duplicate value %s (also at [%d])", fmtFloat(r), j)
		}
		seen[r] = i
	}
}

// checkCaseBatches checks a case's batches: each one of matrix.batches,
// once.
func (s *Suite) checkCaseBatches(field string, bs []int) {
	l := s.loc
	if bs == nil && !l.present(field) {
		return
	}
	if len(bs) == 0 {
		l.errf(field, "empty: the case would have no cells; list some of matrix.batches or remove it")
	}
	seen := map[int]int{}
	for i, b := range bs {
		if !containsInt(s.Matrix.Batches, b) {
			l.errf(index(field, i), "batch %d is not one of matrix.batches %v; a case measures some of the matrix's batches", b, s.Matrix.Batches)
		}
		if j, dup := seen[b]; dup {
			l.errf(index(field, i), "duplicate value %d (also at [%d])", b, j)
		}
		seen[b] = i
	}
}

func containsInt(vs []int, v int) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// checkInts checks a numeric axis: present, each ≥ min, no repeats.
func (l *located) checkInts(field string, vals []int, min int, what string) {
	if len(vals) == 0 {
		if l.present(field) {
			l.errf(field, "empty: the matrix has no cells; list at least one %s", what)
		} else {
			l.errf(field, "required: a list of %ss (≥ %d), e.g. [4, 64]", what, min)
		}
		return
	}
	seen := map[int]int{}
	for i, v := range vals {
		if v < min {
			l.errf(index(field, i), "must be ≥ %d, got %d", min, v)
		}
		if j, dup := seen[v]; dup {
			l.errf(index(field, i), "duplicate value %d (also at [%d])", v, j)
		}
		seen[v] = i
	}
}

func (l *located) checkRates(field string, rates []float64) {
	seen := map[float64]int{}
	for i, r := range rates {
		if !(r > 0) || math.IsInf(r, 0) {
			l.errf(index(field, i), "must be > 0 requests per second, got %s (omit rates for closed loop)", fmtFloat(r))
		} else if r < load.MinRate || r > load.MaxRate {
			l.errf(index(field, i), "must be between %s and %s requests per second, got %s", fmtFloat(load.MinRate), fmtFloat(load.MaxRate), fmtFloat(r))
		}
		if j, dup := seen[r]; dup {
			l.errf(index(field, i), "duplicate value %s (also at [%d])", fmtFloat(r), j)
		}
		seen[r] = i
	}
}

// checkPair checks that a target, path and workload can be measured
// together at every level of the matrix. reported suppresses repeats of the
// same problem at the same field.
func (s *Suite) checkPair(p pair, reported map[string]bool) {
	t, p1, w := s.Targets[p.target], s.Paths[p.path], s.Workloads[p.workload]
	if t == nil || p1 == nil || (p.workload != "" && w == nil) || t.Kind() == "" || p1.Protocol() == "" {
		return // reported where defined or referenced
	}
	report := func(field, format string, args ...any) {
		key := field + "\x00" + format + "\x00" + p.path + "\x00" + p.workload
		if !reported[key] {
			reported[key] = true
			s.loc.errf(field, format, args...)
		}
	}
	proto := p1.Protocol()
	if !t.Serve(proto) {
		report(p.pf, "path %q speaks %s but target %q serves %s; pair targets and paths explicitly with matrix.cases", p.path, proto, p.target, protoList(t.Protocols()))
		return
	}
	if w != nil && !proto.Keyed() {
		report(p.wf, "workload %q applies to paths that read keys (%s); path %q is %s", p.workload, keyedList(), p.path, proto)
	}
	for i, b := range s.Matrix.Batches {
		bf := index("matrix.batches", i)
		if p.batches != nil && !containsInt(p.batches, b) {
			continue
		}
		if b > 1 {
			if why := p1.Spec.BatchProblem(p.path, b); why != "" {
				report(bf, "%s", why)
			}
		}
	}
	if (len(s.Matrix.Rates) > 0 && (p.rates == nil || len(p.rates) > 0)) || s.Search != nil { // a search's steps are at rates
		for i, d := range s.Matrix.Pipeline {
			if sp, ok := p1.Spec.(StreamPacer); d > 1 && (!ok || !sp.PacesStreams()) {
				report(index("matrix.pipeline", i), "pipeline %d cannot be combined with rates for path %q: at a rate each request is sent when due on a connection with none in flight; only HTTP/2 paths (http2: true, h2c) keep several in flight at a rate; accepted: 1", d, p.path)
			}
		}
	}
	if w != nil && w.Kind == WorkloadCold && len(s.Matrix.Rates) > 0 {
		report(index("matrix.rates", 0), "rate %s with cold workload %q: a cold sweep is count-bounded (rows ÷ batch requests) and runs closed loop only; remove rates or measure the cold workload in a suite of its own", fmtFloat(s.Matrix.Rates[0]), p.workload)
	}
}
