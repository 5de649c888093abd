package suite_test

import (
	"errors"
	"strings"
	"testing"

	_ "github.com/benchrig/benchrig/internal/protocol/all"
	. "github.com/benchrig/benchrig/internal/suite"
)

func TestExprEval(t *testing.T) {
	vars := map[string]float64{"requests": 100, "keys": 64, "cache_hits": 6336, "cache_misses": 64, "errors": 0}
	for _, c := range []struct {
		src   string
		fails []string // Failure.String() of each comparison that does not hold
	}{
		{"errors == 0", nil},
		{"cache_hits + cache_misses == requests * keys", nil},
		{"cache_hits == requests × keys", []string{"cache_hits == requests × keys: cache_hits = 6336, requests × keys = 6400"}},
		{"cache_misses == 0 and errors == 0", []string{"cache_misses == 0: cache_misses = 64"}},
		{"cache_hits * 100 / (requests * keys) >= 99", nil},
		{"cache_hits * 100 ÷ (requests * keys) ≥ 100", []string{"cache_hits * 100 ÷ (requests * keys) ≥ 100: cache_hits * 100 ÷ (requests * keys) = 99"}},
		{"7 / 2 > 3", nil},
		{"-errors − 1 < 0", nil},
		{"2 + 3 * 4 == 14 and (2 + 3) * 4 == 20", nil},
		{"errors / errors == 1", []string{"errors / errors == 1: division by zero in errors / errors (errors = 0)"}},
		{"missing == 0", []string{"missing == 0: missing has no value in this sample"}},
		{"requests != 100 and keys <= 63", []string{"requests != 100: requests = 100", "keys <= 63: keys = 64"}},
	} {
		e, err := ParseExpr(c.src)
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		var got []string
		for _, f := range e.Eval(vars) {
			got = append(got, f.String())
		}
		if strings.Join(got, "|") != strings.Join(c.fails, "|") {
			t.Errorf("%q: failures %q, want %q", c.src, got, c.fails)
		}
	}
}

func TestExprErrors(t *testing.T) {
	for _, c := range []struct {
		src string
		off int
		msg string
	}{
		{"", 0, "empty assertion"},
		{"errors", 6, "expected a comparison"},
		{"errors = 0", 7, `unexpected "="`},
		{"a == 1 or b == 2", 7, `expected "and" or the end`},
		{"a < b < c", 6, "comparisons do not chain"},
		{"(a == 1)", 3, "parentheses hold arithmetic only"},
		{"a == 1.5", 5, `"1.5" is not an integer`},
		{"a == 9007199254740993", 5, "out of range"},
		{"a == (1 + 2", 11, "expected ')'"},
		{"a == ", 5, "unexpected end"},
		{"a == 1 and", 10, "unexpected end"},
		{"a == and", 5, `before "and"`},
		{"a == 3x", 5, `"3x" is not an integer`},
		{"a == b % 2", 7, `unexpected "%"`},
		{strings.Repeat("a", MaxExprLen+1), 0, "too long"},
	} {
		_, err := ParseExpr(c.src)
		var xe *ExprError
		if !errors.As(err, &xe) || xe.Off != c.off || !strings.Contains(xe.Msg, c.msg) {
			t.Errorf("%q: error %v, want offset %d and %q", c.src, err, c.off, c.msg)
		}
	}
}

func TestExprNames(t *testing.T) {
	e, err := ParseExpr("cache_hits == requests * keys and cache_misses == 0 and requests > 0")
	if err != nil {
		t.Fatal(err)
	}
	want := []NameUse{{"cache_hits", 0}, {"requests", 14}, {"keys", 25}, {"cache_misses", 34}}
	got := e.Names()
	if len(got) != len(want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("names %v, want %v", got, want)
		}
	}
}

func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{"errors == 0", "a * (b + 1) ÷ 2 ≥ c and d != -3", "((", "1 == 1 and"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := ParseExpr(src)
		if err != nil {
			var xe *ExprError
			if !errors.As(err, &xe) || xe.Off < 0 || xe.Off > len(src) {
				t.Fatalf("%q: %v", src, err)
			}
			return
		}
		for _, u := range e.Names() {
			if !strings.HasPrefix(src[u.Off:], u.Name) {
				t.Fatalf("%q: name %q at %d", src, u.Name, u.Off)
			}
		}
		e.Eval(map[string]float64{})
	})
}
