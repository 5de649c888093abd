package suite_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
	_ "github.com/benchrig/benchrig/internal/protocol/all"
	. "github.com/benchrig/benchrig/internal/suite"
)

// FuzzParseDuration: every duration flag (-d 10, --warmup 1.5) and every
// duration of a suite goes through ParseDuration. Any text is accepted or
// refused without a panic; an accepted one is within 0 and MaxDuration and
// prints back to a text that parses to the same value; a refusal says what
// is accepted or the bound.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"10", "1.5", "250ms", "1m30s", "-1", "1e308", "NaN", "+Inf", "0x10", "168h", "168h1ns", " 2s ", "1_000", ".5", "9223372036854775807ns"} {
		f.Add(s)
	}
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, s string) {
		fuzzcheck.Bound(t, len(s), func() {
			d, err := ParseDuration(s)
			if err != nil {
				if msg := err.Error(); !strings.Contains(msg, "accepted:") && !strings.Contains(msg, "must be") {
					t.Fatalf("%q: the error says neither what is accepted nor the bound: %v", s, err)
				}
				return
			}
			if d < 0 || d > MaxDuration {
				t.Fatalf("%q: %v out of 0–%v", s, d.D(), MaxDuration.D())
			}
			back, err := ParseDuration(d.D().String())
			if err != nil || back != d {
				t.Fatalf("%q → %v prints %q, which parses to %v (%v)", s, d.D(), d.D().String(), back.D(), err)
			}
		})
	})
}

// FuzzOverrides applies arbitrary --set flags and environment values
// (CONNECTIONS=…, RATES=…, DURATION_SECONDS=…) to a valid suite: no panic;
// a refusal, by the overrides or by the plan's bounds when it expands, is
// an Errors saying what is wrong; an accepted suite plans within the
// bounds and resolves.
func FuzzOverrides(f *testing.F) {
	base := []byte(okHead + "  two: {http: {url: \"http://127.0.0.1:{port}/two\"}}\n" + okMatrix)
	if _, err := Parse("s.yaml", base); err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][2]string{
		{"connections=4,64\nrepeats=5", "CONNECTIONS=1,2"},
		{"paths=hello,two\nphases.load=2s", "RATES=100,1000"},
		{"rates=\nseed=7", "DURATION_SECONDS=1.5"},
		{"targets=nope", "BATCHES=x"},
		{"sampler.interval=10ms\npipeline=1,8", "REQUESTS=50000\nGOMAXPROCS=2"},
		{"connections=100001", "REPEATS=100000"},
	} {
		f.Add(seed[0], seed[1])
	}
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, sets, env string) {
		if len(sets)+len(env) > 4096 {
			return
		}
		fuzzcheck.Bound(t, len(sets)+len(env), func() {
			s, err := Parse("s.yaml", base)
			if err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{}
			for _, kv := range strings.Split(env, "\n") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					vars[k] = v
				}
			}
			var flags []string
			if sets != "" {
				flags = strings.Split(sets, "\n")
			}
			err = ApplyOverrides(s, func(k string) string { return vars[k] }, flags)
			if err != nil {
				var es Errors
				if !errors.As(err, &es) || len(es) == 0 {
					t.Fatalf("error %T is not Errors: %v", err, err)
				}
				for _, e := range es {
					if e.Msg == "" {
						t.Fatalf("an empty problem: %+v", e)
					}
				}
				return
			}
			p, err := s.Plan()
			if err != nil {
				// the plan's own bounds (connections, samples) are
				// checked when it expands, positioned like the rest
				var es Errors
				if !errors.As(err, &es) || len(es) == 0 || es[0].Msg == "" {
					t.Fatalf("Plan after the overrides: error %T is not Errors: %v", err, err)
				}
				return
			}
			if len(p.Samples) == 0 || len(p.Samples) > MaxSamples {
				t.Fatalf("%d samples", len(p.Samples))
			}
			if p.Estimate(p.Startup) < 0 || p.Estimate(p.Startup) > 100*365*24*time.Hour {
				t.Fatalf("estimate %v", p.Estimate(p.Startup))
			}
			if _, err := s.Resolved(); err != nil {
				t.Fatalf("Resolved: %v", err)
			}
		})
	})
}
