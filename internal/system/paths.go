package system

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/benchrig/benchrig/internal/metrics"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/workload"
)

// The helpers below map a suite path onto its driver's configuration, the
// same way for every target kind that serves the protocol.

// WorkloadConfig maps a suite workload and a cell's batch onto the workload
// package: writes: 5 (percent) is a mixed workload writing every 20th
// operation; writes: 100 is updates only.
func WorkloadConfig(w *suite.Workload, batch int, seed uint64) workload.Config {
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

// DatasetRows is the largest row count the cells' workloads use, or def
// when none names a workload.
func DatasetRows(s *suite.Suite, cells []suite.Cell, def int64) int64 {
	rows := int64(0)
	for _, c := range cells {
		if w := s.Workloads[c.Workload]; w != nil && w.Rows > rows {
			rows = w.Rows
		}
	}
	if rows == 0 {
		return def
	}
	return rows
}

// JSON encodes v for Spec.DriverConfig or SystemConfig; v is plain data, so
// an error is a programming error and yields null.
func JSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// MergeStats combines statistics sources into one (nil ones are skipped;
// nil when none is left). A name read by two sources is an error: the
// deltas must not overwrite each other silently.
func MergeStats(sources ...StatsSource) StatsSource {
	var ss mergedStats
	for _, s := range sources {
		if s != nil {
			ss = append(ss, s)
		}
	}
	switch len(ss) {
	case 0:
		return nil
	case 1:
		return ss[0]
	}
	return ss
}

type mergedStats []StatsSource

func (ms mergedStats) Snapshot(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	for _, s := range ms {
		m, err := s.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		for k, v := range m {
			if _, dup := out[k]; dup {
				return nil, fmt.Errorf("statistic %q is read twice (a statistics query column named like a built-in one? rename it with AS)", k)
			}
			out[k] = v
		}
	}
	return out, nil
}

// Judges runs several judges in order (nil ones skipped).
func Judges(js ...func(*result.Sample)) func(*result.Sample) {
	return func(s *result.Sample) {
		for _, j := range js {
			if j != nil {
				j(s)
			}
		}
	}
}

// AssertionVars are the values an assertion of a finished sample reads:
// the sample's counters (requests, sent, errors, timeouts, unexpected,
// unanswered, keys = the batch, connections, pipeline, and scheduled,
// late, dropped at a rate, 0 in closed loop) and its statistics deltas.
// requests is what the server completed OK for the sample, as its
// statistics count it: the window's requests and those outstanding at its
// end that were answered OK in the drain after it
// (Load.OutstandingAnswered), so that "cache_hits == requests * keys"
// holds exactly. unanswered is Sample.Unanswered: requests sent and never
// answered, which the server may or may not have counted (see
// JudgeAssertions).
func AssertionVars(s *result.Sample, c suite.Cell) map[string]float64 {
	v := make(map[string]float64, len(s.Stats)+len(suite.SampleCounters))
	for k, x := range s.Stats {
		v[k] = x
	}
	l := s.Load
	v["keys"], v["connections"], v["pipeline"] = float64(c.Batch), float64(c.Connections), float64(max(c.Pipeline, 1))
	v["unanswered"] = float64(s.Unanswered())
	if l != nil {
		v["requests"], v["sent"], v["errors"] = float64(l.Requests+l.OutstandingAnswered), float64(l.Sent), float64(l.Errors)
		v["timeouts"], v["unexpected"] = float64(l.Timeouts), float64(l.Unexpected)
		v["scheduled"], v["late"], v["dropped"] = 0, 0, 0
		if l.Rate != nil {
			v["scheduled"], v["late"], v["dropped"] = float64(l.Rate.Scheduled), float64(l.Rate.Late), float64(l.Rate.Dropped)
		}
	}
	return v
}

// DefaultMaxMiss fills th.MaxMiss when the suite left it unset: 0 (no
// read may miss) when the keys are known to hold values (filled: benchrig
// wrote them, or checked the table they are read from) or one of the
// cell's assertions reads a hit count ("cache_hits == requests * keys"),
// else it stays nil: misses are reported, and tolerated.
func DefaultMaxMiss(th *result.Thresholds, s *suite.Suite, c suite.Cell, filled bool) {
	if th.MaxMiss != nil {
		return
	}
	asserts := false
	for _, a := range s.Assertions(c) {
		asserts = asserts || strings.Contains(a.Expr.Source, "hits")
	}
	if filled || asserts {
		zero := 0.0
		th.MaxMiss = &zero
	}
}

// JudgeAssertions returns the judge of cell c's assertions (its target's
// and its path's): each comparison that does not hold makes the sample
// UNHEALTHY with the expression and both sides' values. nil when the cell
// has none.
//
// A request sent and never answered (Sample.Unanswered: a timeout, or one
// outstanding at a window's end whose answer did not come within the
// drain) may have been processed by the server, and counted in its
// statistics, or not: the client cannot know. An assertion that reads
// requests and does not hold is therefore evaluated again with requests
// counting k of the u unanswered, k = 1…u (at most maxUnansweredTries):
// it holds if some k makes every comparison hold, and its values say
// which k ("… (requests counts 3 of the 21 sent and never answered)").
// With none unanswered it is exact.
func JudgeAssertions(s *suite.Suite, c suite.Cell) func(*result.Sample) {
	as := s.Assertions(c)
	if len(as) == 0 {
		return nil
	}
	return func(smp *result.Sample) {
		vars := AssertionVars(smp, c)
		u := int64(vars["unanswered"])
		for _, a := range as {
			rec := result.Assertion{Expr: a.Expr.Source, Holds: true}
			var values []string
			fs, note := a.Expr.EvalAll(vars), ""
			if k, alt := withUnanswered(a.Expr, vars, fs, u); alt != nil {
				fs, note = alt, fmt.Sprintf(" (requests counts %d of the %d sent and never answered)", k, u)
			}
			for _, f := range fs {
				if v := f.Values(); v != "" {
					values = append(values, v)
				}
				if f.Holds {
					continue
				}
				rec.Holds = false
				if len(a.Expr.Terms) == 1 {
					smp.Verdict.Add("assertion %q failed: %s", a.Expr.Source, f.Values())
				} else {
					smp.Verdict.Add("assertion %q failed at %s", a.Expr.Source, f)
				}
			}
			rec.Values = strings.Join(values, "; ") + note
			smp.Assertions = append(smp.Assertions, rec)
		}
	}
}

// maxUnansweredTries bounds the values of k withUnanswered tries.
const maxUnansweredTries = 1 << 16

// withUnanswered returns the least k in 1…u (u unanswered requests, at
// most maxUnansweredTries of them tried) for which every comparison of e
// holds with requests counting k more, and the comparisons so evaluated;
// 0, nil when fs (e evaluated on vars) already holds, e does not read
// requests, or no such k exists.
func withUnanswered(e *suite.Expr, vars map[string]float64, fs []suite.Failure, u int64) (int64, []suite.Failure) {
	if u <= 0 || allHold(fs) || !slices.ContainsFunc(e.Names(), func(n suite.NameUse) bool { return n.Name == "requests" }) {
		return 0, nil
	}
	alt := maps.Clone(vars)
	for k := int64(1); k <= min(u, maxUnansweredTries); k++ {
		alt["requests"] = vars["requests"] + float64(k)
		if out := e.EvalAll(alt); allHold(out) {
			return k, out
		}
	}
	return 0, nil
}

func allHold(fs []suite.Failure) bool {
	for _, f := range fs {
		if !f.Holds {
			return false
		}
	}
	return true
}

// AddressFunc builds the driver of cell c's path, of the protocol it was
// registered for, on a server reached at addr (host:port; a protocol whose
// paths carry a URL takes its placeholders from vars instead): base with
// the driver, its recorded configuration and the protocol's statistics and
// judge, and probe, the path's own request as a check, run before and after
// the load when the target lists no checks of its own (nil: none).
type AddressFunc func(env Env, c suite.Cell, base Spec, vars map[string]string, addr string) (out Spec, probe []Check, err error)

var addressDrivers = map[suite.Protocol]AddressFunc{}

// RegisterAddress registers the AddressFunc of a protocol the generic
// kinds (command, attach, address) serve; it is called from the init
// function of the protocol's package.
func RegisterAddress(p suite.Protocol, f AddressFunc) {
	if _, dup := addressDrivers[p]; dup {
		panic(fmt.Sprintf("system.RegisterAddress: %q registered twice", p))
	}
	addressDrivers[p] = f
}

// AddressDriver gives base the driver of cell c's path on a server reached
// at an address, by the AddressFunc its protocol registered: the driver,
// its recorded configuration, the protocol's statistics, and the checks —
// the target's own (list), or else the path's request itself — before and
// after the load. Command, attach and address targets share it.
func AddressDriver(env Env, c suite.Cell, base Spec, vars map[string]string, addr string, list []Check) (Spec, error) {
	f := addressDrivers[env.Suite.Paths[c.Path].Protocol()]
	if f == nil {
		return base, Unsupported(env, c)
	}
	base, probe, err := f(env, c, base, vars, addr)
	if err != nil {
		return base, fmt.Errorf("path %q: %w", c.Path, err)
	}
	base.PreChecks = list
	if len(list) == 0 {
		base.PreChecks = probe
	}
	base.PostChecks = base.PreChecks
	if m := env.Target.Metrics; m != nil {
		base.Metrics = &metrics.Config{URL: suite.Expand(m.URL, vars), Every: m.Every.D(), Series: m.Series}
	}
	base.Remote = &Remote{Vars: vars, Addr: addr}
	return base, nil
}
