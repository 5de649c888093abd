package suite_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/benchrig/benchrig/internal/protocol/all"
	. "github.com/benchrig/benchrig/internal/suite"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestApplyOverridesEnv(t *testing.T) {
	s := mustLoad(t, "testdata/pg-local-cache.yaml")
	env := envOf(map[string]string{
		"CONNECTIONS": "4,64", "BATCHES": "1, 64", "REPEATS": "5", "DURATION_SECONDS": "2",
		"REQUESTS": "50000", "GOMAXPROCS": "8", "UNRELATED": "x",
	})
	if err := ApplyOverrides(s, env, nil); err != nil {
		t.Fatal(err)
	}
	m := s.Matrix
	if !reflect.DeepEqual(m.Connections, []int{4, 64}) || !reflect.DeepEqual(m.Batches, []int{1, 64}) ||
		s.Repeats != 5 || s.Phases.Load != Duration(2*time.Second) || s.Requests != 50000 || s.Placement.ClientGOMAXPROCS != 8 {
		t.Errorf("env not applied: %+v repeats %d load %s requests %d", m, s.Repeats, s.Phases.Load, s.Requests)
	}
	var names []string
	for _, o := range s.Overrides {
		if o.From != "env" {
			t.Errorf("override %+v not from env", o)
		}
		names = append(names, o.Name)
	}
	if strings.Join(names, ",") != "CONNECTIONS,BATCHES,REPEATS,REQUESTS,DURATION_SECONDS,GOMAXPROCS" {
		t.Errorf("overrides recorded: %v", names)
	}
	out, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	// the overrides are applied in Resolved; which ones were applied is
	// recorded beside it (s.Overrides), so Resolved parses back as a suite.
	if !strings.Contains(string(out), `"connections":[4,64]`) {
		t.Errorf("Resolved does not hold the overridden values: %s", out)
	}
	if _, err := Parse("resolved", out); err != nil {
		t.Errorf("Resolved does not parse back as a suite: %v", err)
	}
	orig := mustLoad(t, "testdata/pg-local-cache.yaml")
	if s.SHA256() != orig.SHA256() {
		t.Error("overrides changed the file checksum")
	}
}

func TestApplyOverridesSetAfterEnv(t *testing.T) {
	s := mustLoad(t, "testdata/http-frameworks.yaml")
	err := ApplyOverrides(s, envOf(map[string]string{"CLIENTS": "64", "RATES": "100"}),
		[]string{"connections=8", "rates=", "phases.warmup=2s", "SEED=9", "pipeline=1,4"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Matrix.Connections, []int{8}) || s.Matrix.Rates != nil || s.Phases.Warmup != Duration(2*time.Second) ||
		s.Seed != 9 || !reflect.DeepEqual(s.Matrix.Pipeline, []int{1, 4}) {
		t.Errorf("--set after env: %+v warmup %s seed %d", s.Matrix, s.Phases.Warmup, s.Seed)
	}
	if len(s.Overrides) != 7 || s.Overrides[2] != (Override{From: "set", Name: "connections", Value: "8"}) {
		t.Errorf("overrides: %+v", s.Overrides)
	}
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if p.Cells[0].OpenLoop() || p.Cells[0].ID != "go-hello/hello/c=8/b=1" {
		t.Errorf("rates= did not select closed loop: %+v", p.Cells[0])
	}
}

func TestApplyOverridesErrors(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		sets []string
		want string
	}{
		{"list with a word", map[string]string{"CONNECTIONS": "4,x"}, nil,
			`CONNECTIONS="4,x": not a list of positive integers, e.g. 4,64`},
		{"zero in a list", map[string]string{"BATCHES": "0,1"}, nil,
			`BATCHES="0,1": not a list of positive integers, e.g. 4,64`},
		{"zero repeats", map[string]string{"REPEATS": "0"}, nil,
			`REPEATS="0": not a positive integer`},
		{"negative requests", map[string]string{"REQUESTS": "-1"}, nil,
			`REQUESTS="-1": not a non-negative integer (0 bounds samples by duration only)`},
		{"duration in words", map[string]string{"DURATION_SECONDS": "ten"}, nil,
			`DURATION_SECONDS="ten": not a positive number of seconds`},
		{"negative rate", map[string]string{"RATES": "100,-5"}, nil,
			`RATES="100,-5": not a list of positive numbers of requests per second, e.g. 100,1000 (empty for closed loop)`},
		{"clients list", map[string]string{"CLIENTS": "4,64"}, nil,
			`CLIENTS="4,64": CLIENTS is one connection count; use CONNECTIONS for a list`},
		{"clients conflict", map[string]string{"CONNECTIONS": "4", "CLIENTS": "64"}, nil,
			`CLIENTS="64": conflicts with CONNECTIONS="4"; set one of them`},
		{"set without =", nil, []string{"connections"},
			`--set connections: expected key=value, e.g. --set connections=4,64`},
		{"unknown set key", nil, []string{"conections=4"},
			`--set conections: unknown key "conections"; accepted: connections, clients, batches, rates, targets, paths, pipeline, repeats, requests, duration_seconds, gomaxprocs, busy_poll, io_uring, coalesce, seed, phases.baseline, phases.warmup, phases.settle, phases.load, phases.recovery, sampler.interval`},
		{"bad set duration", nil, []string{"phases.load=fast"},
			`--set phases.load="fast": not a duration: "fast"; accepted: a number of seconds (10, 1.5) or a number with a unit (250ms, 1.5s, 1m)`},
		{"busy poll past its bound", nil, []string{"busy_poll=5ms"},
			`--set busy_poll="5ms": must be between 0 (off) and 1ms, got 5ms`},
		{"io_uring neither auto nor off", nil, []string{"io_uring=on"},
			`--set io_uring="on": not an io_uring setting: "on"; accepted: auto, off`},
		{"coalesce neither auto nor off", nil, []string{"coalesce=20us"},
			`--set coalesce="20us": not a coalesce setting: "20us"; accepted: auto, off`},
		{"valid value, invalid suite", nil, []string{"sampler.interval=50ms"},
			`--set sampler.interval="50ms": sampler.interval: must be ≥ 100ms, got 50ms`},
		{"http path batch", map[string]string{"BATCHES": "1,64"}, nil,
			`BATCHES="1,64": matrix.batches[1]: batch 64 with http path "hello": an HTTP request carries no batch; accepted: 1`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mustLoad(t, "testdata/http-frameworks.yaml")
			err := ApplyOverrides(s, envOf(c.env), c.sets)
			if err == nil {
				t.Fatal("accepted")
			}
			var e *Error
			if !errors.As(err, &e) || e.Error() != c.want {
				t.Errorf("got  %v\nwant %s", err, c.want)
			}
			if e != nil && e.Line != 0 {
				t.Errorf("an override's error has a file position: %+v", e)
			}
		})
	}
}

// TestOverrideRevalidates covers overrides that are well formed but break a
// rule that involves the rest of the suite.
func TestOverrideRevalidates(t *testing.T) {
	src := pgHead + "matrix: {cases: [{target: db, path: one, workload: cold}, {target: cache, path: mget, workload: cold}], connections: [4]}\n"
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"RATES": "100"}, `RATES="100": matrix.rates[0]: rate 100 with cold workload "cold"`},
		{map[string]string{"BATCHES": "1,4096"}, `BATCHES="1,4096": matrix.batches[1]: must be ≤ 1024 for resp path "mget", got 4096`},
	} {
		s := mustParse(t, "pg.yaml", src)
		err := ApplyOverrides(s, envOf(c.env), nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("got  %v\nwant %s…", err, c.want)
		}
	}
	// A problem the override did not cause keeps its file position.
	s := mustParse(t, "pg.yaml", src)
	s.Matrix.Connections = []int{0}
	err := ApplyOverrides(s, envOf(map[string]string{"REPEATS": "2"}), nil)
	if err == nil || !strings.HasPrefix(err.Error(), "pg.yaml:13:119: matrix.connections[0]: must be ≥ 1, got 0") {
		t.Errorf("got %v", err)
	}
}

func TestApplyOverridesNothing(t *testing.T) {
	s := mustLoad(t, "testdata/http-frameworks.yaml")
	before, _ := s.Resolved()
	if err := ApplyOverrides(s, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := ApplyOverrides(s, envOf(nil), []string{}); err != nil {
		t.Fatal(err)
	}
	after, _ := s.Resolved()
	if string(before) != string(after) || len(s.Overrides) != 0 {
		t.Errorf("no overrides changed the suite:\n%s\n%s", before, after)
	}
}

func TestApplyOverridesIOUring(t *testing.T) {
	s := mustLoad(t, "testdata/http-frameworks.yaml")
	if err := ApplyOverrides(s, envOf(nil), []string{"io_uring= off "}); err != nil {
		t.Fatal(err)
	}
	if s.Placement.IOUring != "off" {
		t.Errorf("placement.io_uring = %q, want off", s.Placement.IOUring)
	}
}

func TestApplyOverridesBusyPoll(t *testing.T) {
	s := mustLoad(t, "testdata/http-frameworks.yaml")
	if err := ApplyOverrides(s, envOf(nil), []string{"busy_poll= 50us "}); err != nil {
		t.Fatal(err)
	}
	if s.Placement.BusyPoll != "50us" {
		t.Errorf("placement.busy_poll = %q, want 50us", s.Placement.BusyPoll)
	}
}
