package suite_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
	_ "github.com/benchrig/benchrig/internal/protocol/all"
	. "github.com/benchrig/benchrig/internal/suite"
)

// FuzzParse feeds arbitrary bytes to Parse: it must never panic, every
// problem must name the file and say something, and an accepted suite must
// plan, format and record. Each input's allocation (parse, plan, resolve)
// stays within the fuzzcheck bound: the pre-scan's nesting, indentation
// and size bounds and the alias bound keep goccy's quadratic parser and
// alias expansion linear in the input.
func FuzzParse(f *testing.F) {
	fuzzcheck.Limit()
	for _, name := range []string{"testdata/http-frameworks.yaml", "testdata/pg-local-cache.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(okHead + okMatrix))
	f.Add([]byte(pgHead + "matrix: {targets: [db], paths: [one], workloads: [cold], connections: [4], rates: [100]}\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("<<: {name: t}\n"))
	f.Add([]byte("name: " + strings.Repeat("[", 5000)))
	f.Add([]byte("rates: [1e308]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcheck.Bound(t, len(data), func() { fuzzParse(t, data) })
	})
}

// fuzzParse is one input of FuzzParse.
func fuzzParse(t *testing.T, data []byte) {
	{
		s, err := Parse("f.yaml", data)
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %T is not Errors: %v", err, err)
			}
			for _, e := range es {
				if e.File != "f.yaml" || e.Msg == "" {
					t.Fatalf("bad error %+v", e)
				}
			}
			return
		}
		p, err := s.Plan()
		if err != nil {
			t.Fatalf("accepted suite does not plan: %v", err)
		}
		if len(p.Samples) == 0 {
			t.Fatal("accepted suite has no samples")
		}
		if _, err := s.Resolved(); err != nil {
			t.Fatalf("Resolved: %v", err)
		}
	}
}

// TestAliasBomb checks that aliases cannot expand a small file into a huge
// amount of work: 120 targets aliasing one whose command aliases one string
// 100 times is 12,000 expansions, past the bound; a few aliases are fine.
func TestAliasBomb(t *testing.T) {
	build := func(targets, args int) string {
		var b strings.Builder
		b.WriteString("name: bomb\ntargets:\n  t0: &t {command: [&s ./srv")
		for i := 1; i < args; i++ {
			b.WriteString(", *s")
		}
		b.WriteString("]}\n")
		for i := 1; i < targets; i++ {
			fmt.Fprintf(&b, "  t%d: *t\n", i)
		}
		b.WriteString("paths:\n  p: {http: {url: \"http://127.0.0.1:1/\"}}\nmatrix: {targets: [t0], paths: [p], connections: [1]}\n")
		return b.String()
	}
	if _, err := Parse("few.yaml", []byte(build(3, 3))); err != nil {
		t.Fatal(err)
	}
	_, err := Parse("bomb.yaml", []byte(build(120, 100)))
	if err == nil || !strings.Contains(err.Error(), "too many alias expansions") {
		t.Fatalf("got %v", err)
	}
}
