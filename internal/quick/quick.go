// Package quick turns the options of a quick mode (benchrig http, pg, resp)
// into a suite of one target: a suite document parsed with the suite's own
// rules, so a flag is bounded exactly as the suite field it fills, and a
// refused value is reported under the flag's name. The command line only
// binds flags to these structs; the suite runs through the one Runner.
//
//	c := quick.Common{Conns: []int{10}, Pipelines: []int{1}, Duration: 5 * time.Second, Repeats: 1, Changed: flags.Changed}
//	h := quick.HTTP{Common: c, Method: "GET"}
//	d, err := h.Build("localhost:8080/")
//	s, p, err := quick.Plan("benchrig http", d)
package quick

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
)

// Doc is a suite document being built, as the suite file would hold it.
type Doc map[string]any

// Common are the options every quick mode shares, under the names a suite
// uses for the same things. All errors are bad input: the flag named, what
// is accepted.
type Common struct {
	Conns, Pipelines []int
	Duration         time.Duration
	Requests         int64
	Warmup           time.Duration
	Repeats          int

	Rate       float64
	Arrival    string
	Seed       uint64
	MaxBacklog int
	TimerSlack time.Duration
	// RateSearch: a search decides the rates (benchrig capacity), so the
	// rate mode's flags apply without --rate.
	RateSearch  bool
	MaxP99      time.Duration
	MinCoverage float64
	// MaxMiss is --max-miss (pg and resp): recorded only when given.
	MaxMiss float64

	// the server side
	TargetCPUs string
	ClientCPUs string
	BusyPoll   string
	IOUring    string
	Coalesce   string
	Interval   time.Duration
	NoPSS      bool
	Baseline   time.Duration
	Settle     time.Duration
	Recovery   time.Duration

	// Changed reports whether the user gave a flag ("duration", "rate");
	// an unchanged flag leaves a mode's default.
	Changed func(flag string) bool
}

// validate checks the shared flags: bad input is a usage error naming the
// flag and what it accepts.
func (q *Common) Validate() error {
	if q.Changed("rate") && (!(q.Rate > 0) || math.IsInf(q.Rate, 0)) {
		return fmt.Errorf("--rate must be > 0 requests per second, got %v", q.Rate)
	}
	if q.Changed("duration") && q.Duration <= 0 {
		return fmt.Errorf("--duration must be > 0 (e.g. 10s, 500ms), got %s", q.Duration)
	}
	if q.Requests < 0 || q.Changed("requests") && q.Requests == 0 {
		return fmt.Errorf("--requests must be ≥ 1, got %d", q.Requests)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"warmup", q.Warmup}, {"baseline", q.Baseline}, {"settle", q.Settle}, {"recovery", q.Recovery}} {
		if d.v < 0 {
			return fmt.Errorf("--%s must be ≥ 0, got %s", d.name, d.v)
		}
	}
	if q.Changed("max-backlog") && q.MaxBacklog < 1 {
		return fmt.Errorf("--max-backlog must be ≥ 1, got %d", q.MaxBacklog)
	}
	if q.Rate == 0 && !q.RateSearch && (q.Changed("arrival") || q.Changed("max-backlog") || q.Changed("timer-slack")) {
		return fmt.Errorf("--arrival, --max-backlog and --timer-slack need --rate")
	}
	if q.Rate > 0 && q.Changed("requests") && q.Changed("duration") {
		if want := q.Rate * q.Duration.Seconds(); math.Abs(float64(q.Requests)-want) >= 1 {
			return fmt.Errorf("--requests %d contradicts --rate %v × --duration %s = %.0f requests: give --duration or --requests, not both",
				q.Requests, q.Rate, q.Duration, want)
		}
	}
	return nil
}

// Suite returns the suite document of the shared flags: name, repeats,
// bounds, phases (def, the mode's defaults, then the flags; def's Load and
// Requests are unused), thresholds, sampler, placement and the matrix axes.
// The mode adds targets, paths, workloads and cases.
func (q *Common) Suite(name string, def result.Phases) Doc {
	ph := def
	for _, o := range []struct {
		flag string
		v    time.Duration
		dst  *time.Duration
	}{{"baseline", q.Baseline, &ph.Baseline}, {"warmup", q.Warmup, &ph.Warmup}, {"settle", q.Settle, &ph.Settle}, {"recovery", q.Recovery, &ph.Recovery}} {
		if q.Changed(o.flag) {
			*o.dst = o.v
		}
	}
	load := q.Duration
	if q.Requests > 0 && !q.Changed("duration") {
		load = 0 // a count alone bounds the window
	}
	d := Doc{
		"name":    name,
		"seed":    q.Seed,
		"repeats": q.Repeats,
		"phases": Doc{"baseline": ph.Baseline.String(), "warmup": ph.Warmup.String(), "settle": ph.Settle.String(),
			"load": load.String(), "recovery": ph.Recovery.String()},
		"thresholds": Doc{"coverage": q.MinCoverage, "p99": q.MaxP99.String()},
		"sampler":    Doc{"interval": q.Interval.String(), "no_pss": q.NoPSS},
	}
	if q.Requests > 0 {
		d["requests"] = q.Requests
	}
	if q.Changed("max-miss") {
		d["thresholds"].(Doc)["max_miss"] = q.MaxMiss
	}
	pl := Doc{}
	if q.ClientCPUs != "" {
		pl["client_cpus"] = q.ClientCPUs
	}
	if q.TargetCPUs != "" {
		pl["target_cpus"] = q.TargetCPUs
	}
	if q.Changed("busy-poll") {
		pl["busy_poll"] = q.BusyPoll
	}
	if q.Changed("io-uring") {
		pl["io_uring"] = q.IOUring
	}
	if q.Changed("coalesce") {
		pl["coalesce"] = q.Coalesce
	}
	d["placement"] = pl
	conns := q.Conns
	if q.Rate > 0 && !q.Changed("connections") {
		conns = []int{32}
	}
	m := Doc{"connections": conns, "pipeline": q.Pipelines}
	if q.Rate > 0 {
		m["rates"] = []float64{q.Rate}
	}
	if q.Rate > 0 || q.RateSearch {
		d["arrival"] = q.Arrival
		if q.MaxBacklog > 0 {
			d["max_backlog"] = q.MaxBacklog
		}
		if q.Changed("timer-slack") {
			d["timer_slack"] = q.TimerSlack.String()
		}
	}
	d["matrix"] = m
	return d
}

// Plan parses the suite document with the suite's own rules and
// expands its plan; a value the suite refuses is reported under the flag
// that set it ("--connections: must be ≥ 1, got 0"), so quick modes and
// suites share one set of bounds.
func Plan(name string, d Doc) (*suite.Suite, *suite.Plan, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, nil, err
	}
	s, err := suite.Parse(name, b)
	if err != nil {
		return nil, nil, flagErrors(err)
	}
	p, err := s.Plan()
	if err != nil {
		return nil, nil, flagErrors(err)
	}
	if err := s.CheckPlacement(); err != nil {
		return nil, nil, flagErrors(err)
	}
	return s, p, nil
}

// suiteFlags names the flag that fills each field of a quick mode's suite,
// by field prefix (the longest match wins).
var suiteFlags = map[string]string{
	"repeats": "--repeats", "requests": "--requests", "seed": "--seed", "arrival": "--arrival", "max_backlog": "--max-backlog", "timer_slack": "--timer-slack",
	"phases.load": "--duration", "phases.warmup": "--warmup", "phases.baseline": "--baseline", "phases.settle": "--settle",
	"phases.recovery": "--recovery", "thresholds.coverage": "--min-coverage", "thresholds.p99": "--max-p99", "thresholds.max_miss": "--max-miss",
	"sampler.interval": "--sample-interval", "placement.client_cpus": "--client-cpus", "placement.target_cpus": "--target-cpus", "placement.busy_poll": "--busy-poll", "placement.io_uring": "--io-uring", "placement.coalesce": "--coalesce",
	"matrix.connections": "--connections", "matrix.pipeline": "--pipeline", "matrix.rates": "--rate", "matrix.batches": "--batch",
	"paths.request.http.url": "URL", "paths.request.http.method": "--method", "paths.request.http.headers": "--header",
	"paths.request.http.expect_status": "--expect-status", "paths.request.http.timeout": "--timeout",
	"secret_headers": "--secret-header", "secret_params": "--secret-param",
	"targets.redis.redis.verify_batch": "--verify-batch",
	"search.rate.from":                 "--from", "search.rate.max": "--max", "search.rate.resolution": "--resolution", "search.rate.factor": "--factor",
	"search.confirm": "--confirm", "search.searches": "--searches", "search.max_time": "--max-time",
}

// flagErrors rewrites the errors of a quick mode's suite in the words of
// its flags; a field no flag fills keeps its suite name.
func flagErrors(err error) error {
	var es suite.Errors
	if !errors.As(err, &es) {
		return err
	}
	lines := make([]string, 0, len(es))
	for _, e := range es {
		flag, best := "", -1
		for prefix, f := range suiteFlags {
			if (e.Field == prefix || strings.HasPrefix(e.Field, prefix+".") || strings.HasPrefix(e.Field, prefix+"[")) && len(prefix) > best {
				flag, best = f, len(prefix)
			}
		}
		if t, rest, ok := strings.Cut(strings.TrimPrefix(e.Field, "targets."), ".limits"); flag == "" && ok && t != "" && strings.HasPrefix(e.Field, "targets.") {
			flag = "--limit-" + strings.TrimPrefix(rest, ".")
			if rest == "" {
				flag = "--limit-*"
			}
		}
		if flag == "" {
			flag = e.Field
		}
		lines = append(lines, flag+": "+e.Msg)
	}
	return errors.New(strings.Join(lines, "; "))
}

// SuiteName makes a suite-valid name of a word (letters, digits, '.', '_',
// '-', starting with a letter or digit).
func SuiteName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	out := strings.TrimLeft(b.String(), "._-")
	if out == "" {
		return "target"
	}
	return out
}

// NameValues turns repeated "Name: value" flag values (HTTP headers, gRPC
// metadata) into a suite mapping; an entry without a colon or a name is
// an error naming the flag and the entry.
func NameValues(flag string, entries []string) (Doc, error) {
	d := Doc{}
	for _, kv := range entries {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%s %q: want 'Name: value'", flag, kv)
		}
		d[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return d, nil
}
