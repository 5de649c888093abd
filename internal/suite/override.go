package suite

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// An override changes one setting of a suite from the environment (the
// seeds' CONNECTIONS=4,64 style) or from a --set key=value flag.
type overrideKey struct {
	key   string // --set key
	env   string // environment variable, "" for --set only
	field string // the suite field it sets
	// apply parses v into s; its error says what is accepted.
	apply func(s *Suite, v string) error
}

// overrideKeys are the accepted overrides; environment variables are read in
// this order.
var overrideKeys = []overrideKey{
	{"connections", "CONNECTIONS", "matrix.connections", func(s *Suite, v string) (err error) {
		s.Matrix.Connections, err = positiveInts(v)
		return err
	}},
	{"clients", "CLIENTS", "matrix.connections", func(s *Suite, v string) error {
		n, err := positiveInt(v)
		if err != nil {
			if _, lerr := positiveInts(v); lerr == nil {
				return fmt.Errorf("CLIENTS is one connection count; use CONNECTIONS for a list")
			}
			return err
		}
		s.Matrix.Connections = []int{n}
		return nil
	}},
	{"batches", "BATCHES", "matrix.batches", func(s *Suite, v string) (err error) {
		s.Matrix.Batches, err = positiveInts(v)
		return err
	}},
	{"rates", "RATES", "matrix.rates", func(s *Suite, v string) (err error) {
		s.Matrix.Rates, err = positiveNumbers(v)
		return err
	}},
	{"targets", "", "matrix.targets", func(s *Suite, v string) (err error) {
		if len(s.Matrix.Cases) > 0 {
			return fmt.Errorf("the matrix lists cases; targets selects from matrix.targets only")
		}
		s.Matrix.Targets, err = names(v, "targets", "node-http,fastify")
		return err
	}},
	{"paths", "", "matrix.paths", func(s *Suite, v string) (err error) {
		if len(s.Matrix.Cases) > 0 {
			return fmt.Errorf("the matrix lists cases; paths selects from matrix.paths only")
		}
		s.Matrix.Paths, err = names(v, "paths", "hello,json")
		return err
	}},
	{"pipeline", "", "matrix.pipeline", func(s *Suite, v string) (err error) {
		s.Matrix.Pipeline, err = positiveInts(v)
		return err
	}},
	{"repeats", "REPEATS", "repeats", func(s *Suite, v string) (err error) {
		s.Repeats, err = positiveInt(v)
		return err
	}},
	{"requests", "REQUESTS", "requests", func(s *Suite, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("not a non-negative integer (0 bounds samples by duration only)")
		}
		s.Requests = n
		return nil
	}},
	{"duration_seconds", "DURATION_SECONDS", "phases.load", func(s *Suite, v string) error {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f > 0) || f > math.MaxInt64/float64(time.Second) {
			return fmt.Errorf("not a positive number of seconds")
		}
		s.Phases.Load = Duration(f * float64(time.Second))
		return nil
	}},
	{"gomaxprocs", "GOMAXPROCS", "placement.client_gomaxprocs", func(s *Suite, v string) (err error) {
		s.Placement.ClientGOMAXPROCS, err = positiveInt(v)
		return err
	}},
	{"busy_poll", "", "placement.busy_poll", func(s *Suite, v string) error {
		if _, err := ParseBusyPoll(v); err != nil {
			return err
		}
		s.Placement.BusyPoll = strings.TrimSpace(v)
		return nil
	}},
	{"io_uring", "", "placement.io_uring", func(s *Suite, v string) error {
		if _, err := ParseIOUring(v); err != nil {
			return err
		}
		s.Placement.IOUring = strings.TrimSpace(v)
		return nil
	}},
	{"coalesce", "", "placement.coalesce", func(s *Suite, v string) error {
		if _, err := ParseCoalesce(v); err != nil {
			return err
		}
		s.Placement.Coalesce = strings.TrimSpace(v)
		return nil
	}},
	{"seed", "", "seed", func(s *Suite, v string) (err error) {
		s.Seed, err = strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("not a non-negative integer")
		}
		return nil
	}},
	durationKey("phases.baseline", func(s *Suite) *Duration { return &s.Phases.Baseline }),
	durationKey("phases.warmup", func(s *Suite) *Duration { return &s.Phases.Warmup }),
	durationKey("phases.settle", func(s *Suite) *Duration { return &s.Phases.Settle }),
	durationKey("phases.load", func(s *Suite) *Duration { return &s.Phases.Load }),
	durationKey("phases.recovery", func(s *Suite) *Duration { return &s.Phases.Recovery }),
	durationKey("sampler.interval", func(s *Suite) *Duration { return &s.Sampler.Interval }),
}

func durationKey(key string, field func(*Suite) *Duration) overrideKey {
	return overrideKey{key: key, field: key, apply: func(s *Suite, v string) error {
		d, err := ParseDuration(v)
		if err != nil {
			return err
		}
		*field(s) = d
		return nil
	}}
}

// ApplyOverrides changes s as the environment and --set flags ask, then
// validates it again. env looks up an environment variable ("" when unset;
// nil reads none): CONNECTIONS=4,64, CLIENTS=64 (one connection count),
// BATCHES=1,64, RATES=100,1000, REPEATS=5, REQUESTS=50000,
// DURATION_SECONDS=2 (the load phase) and GOMAXPROCS=8 (the client's) are
// read, in that order. Then each of sets, "key=value", is applied in order;
// keys are the variables' lower-case names plus busy_poll, io_uring, targets and paths
// (a comma-separated selection of matrix.targets / matrix.paths), pipeline, seed,
// phases.<name> and sampler.interval, and "rates=" (empty) selects closed
// loop. Applied overrides are listed in s.Overrides and recorded by
// Resolved. On error s may be partly changed and should be discarded; the
// error is an Errors naming each bad override (`CONNECTIONS="4,x": not a
// list of positive integers`) or the field an override made invalid.
func ApplyOverrides(s *Suite, env func(string) string, sets []string) error {
	if s.loc == nil {
		s.loc = newLocated(s.Source.File)
	}
	l := s.loc
	l.errs = nil
	if env != nil {
		connections := ""
		for _, k := range overrideKeys {
			if k.env == "" {
				continue
			}
			v := env(k.env)
			if v == "" {
				continue
			}
			src := fmt.Sprintf("%s=%q", k.env, v)
			if k.env == "CONNECTIONS" {
				connections = v
			}
			if k.env == "CLIENTS" && connections != "" && strings.TrimSpace(connections) != strings.TrimSpace(v) {
				l.errs = append(l.errs, &Error{Source: src, Msg: fmt.Sprintf("conflicts with CONNECTIONS=%q; set one of them", connections)})
				continue
			}
			s.applyOverride(k, Override{From: "env", Name: k.env, Value: v}, src)
		}
	}
	for _, set := range sets {
		key, v, ok := strings.Cut(set, "=")
		src := "--set " + strings.TrimSpace(set)
		if !ok {
			l.errs = append(l.errs, &Error{Source: src, Msg: "expected key=value, e.g. --set connections=4,64"})
			continue
		}
		key = strings.ToLower(strings.TrimSpace(key))
		src = fmt.Sprintf("--set %s=%q", key, v)
		k, found := findOverride(key)
		if !found {
			// The value is not echoed: it may be a secret set by mistake.
			l.errs = append(l.errs, &Error{Source: "--set " + key, Msg: fmt.Sprintf("unknown key %q; accepted: %s", key, overrideNames())})
			continue
		}
		s.applyOverride(k, Override{From: "set", Name: key, Value: v}, src)
	}
	if len(l.errs) > 0 {
		return l.result()
	}
	return s.check()
}

// applyOverride applies one override, recording it or its error.
func (s *Suite) applyOverride(k overrideKey, o Override, src string) {
	if k.key == "rates" && strings.TrimSpace(o.Value) == "" {
		s.Matrix.Rates = nil // closed loop
	} else if err := k.apply(s, o.Value); err != nil {
		s.loc.errs = append(s.loc.errs, &Error{Source: src, Msg: err.Error()})
		return
	}
	s.loc.overridden[k.field] = src
	s.Overrides = append(s.Overrides, o)
}

func findOverride(key string) (overrideKey, bool) {
	for _, k := range overrideKeys {
		if k.key == key {
			return k, true
		}
	}
	return overrideKey{}, false
}

func overrideNames() string {
	names := make([]string, len(overrideKeys))
	for i, k := range overrideKeys {
		names[i] = k.key
	}
	return strings.Join(names, ", ")
}

func positiveInt(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("not a positive integer")
	}
	return n, nil
}

// names parses a comma-separated list of distinct names (at most
// maxOverrideNames), for the targets and paths overrides; whether each is
// defined is checked with the suite.
func names(v, what, example string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, part := range strings.Split(v, ",") {
		n := strings.TrimSpace(part)
		if n == "" || !nameRE.MatchString(n) {
			return nil, fmt.Errorf("not a list of %s names, e.g. %s", what, example)
		}
		if seen[n] {
			return nil, fmt.Errorf("%q is listed twice", n)
		}
		seen[n] = true
		out = append(out, n)
	}
	if len(out) > maxOverrideNames {
		return nil, fmt.Errorf("%d %s, at most %d", len(out), what, maxOverrideNames)
	}
	return out, nil
}

// maxOverrideNames bounds the targets and paths overrides.
const maxOverrideNames = 1000

func positiveInts(v string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("not a list of positive integers, e.g. 4,64")
		}
		out = append(out, n)
	}
	return out, nil
}

func positiveNumbers(v string) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(v, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("not a list of positive numbers of requests per second, e.g. 100,1000 (empty for closed loop)")
		}
		out = append(out, f)
	}
	return out, nil
}
