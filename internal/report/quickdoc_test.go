package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
	"github.com/benchrig/benchrig/internal/result"
)

// quickSeeds are quick documents of both schemas, as benchrig http, pg and
// resp write them.
func quickSeeds(t testing.TB) [][]byte {
	q := result.Quick{Schema: result.QuickSchema, Args: []string{"http", "-c", "4"},
		Sample: result.Sample{Key: "run#1", Protocol: "http", Load: &result.Load{Connections: 4, Requests: 10},
			Target: &result.TargetInfo{Name: "hello", Kind: "command"}}}
	m := result.QuickMatrix{Schema: result.QuickMatrixSchema, Args: []string{"pg"},
		Server:  &result.TargetInfo{Kind: "postgres", Version: "15"},
		Samples: []result.Sample{{Key: "a#1", Cell: "a", Protocol: "pg"}, {Key: "b#1", Cell: "b", Case: "b", Variant: "v"}}}
	var out [][]byte
	for _, v := range []any{q, m} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// FuzzQuickDoc feeds arbitrary bytes to QuickDoc, the quick-JSON loader
// behind benchrig report: no panic; an error names the file; a source it
// returns has rows, each with a sample and labels; bytes that are not a
// quick document are handed back (ok false) with no error. Allocation per
// input is within the fuzzcheck bound (encoding/json also bounds nesting).
func FuzzQuickDoc(f *testing.F) {
	fuzzcheck.Limit()
	for _, b := range quickSeeds(f) {
		f.Add(b)
	}
	f.Add([]byte(`{"schema":"benchrig.quick-matrix/v1","samples":[]}`))
	f.Add([]byte(`{"schema":"benchrig.other/v9"}`))
	f.Add([]byte(`{"type":"header","schema":"benchrig.results/v1"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcheck.Bound(t, len(data), func() {
			src, ok, err := QuickDoc("q.json", data)
			switch {
			case !ok:
				if src != nil || err != nil {
					t.Fatalf("not a quick document, yet %v, %v", src, err)
				}
			case err != nil:
				if src != nil || !strings.HasPrefix(err.Error(), "q.json: ") {
					t.Fatalf("error %q (source %v)", err, src)
				}
			default:
				if len(src.Rows) == 0 || src.Path != "q.json" {
					t.Fatalf("source %+v", src)
				}
				for _, r := range src.Rows {
					if r.Sample == nil {
						t.Fatal("a row without a sample")
					}
				}
			}
		})
	})
}

// TestQuickDoc pins what QuickDoc makes of each kind of document.
func TestQuickDoc(t *testing.T) {
	seeds := quickSeeds(t)
	src, ok, err := QuickDoc("q.json", seeds[0])
	if !ok || err != nil || src.Kind != "quick" || len(src.Rows) != 1 || src.Rows[0].Case != "4 conns" || src.Rows[0].Variant != "hello" || src.Targets["hello"].Kind != "command" {
		t.Fatalf("quick: %+v %v %v", src, ok, err)
	}
	src, ok, err = QuickDoc("m.json", seeds[1])
	if !ok || err != nil || src.Kind != "quick-matrix" || len(src.Rows) != 2 || src.Rows[0].Case != "a" || src.Rows[1].Variant != "v" || src.Targets["postgres"].Version != "15" {
		t.Fatalf("matrix: %+v %v %v", src, ok, err)
	}
	if _, ok, err := QuickDoc("e.json", []byte(`{"schema":"benchrig.quick-matrix/v1","samples":[]}`)); !ok || err == nil || err.Error() != "e.json: no samples" {
		t.Fatalf("empty matrix: %v %v", ok, err)
	}
	if _, ok, err := QuickDoc("o.json", []byte(`{"schema":"x/v1"}`)); !ok || err == nil || !strings.Contains(err.Error(), `schema "x/v1": want`) {
		t.Fatalf("other schema: %v %v", ok, err)
	}
	if src, ok, err := QuickDoc("r.json", []byte("{\"type\":\"header\"}\n{\"type\":\"sample\"}\n")); ok || src != nil || err != nil {
		t.Fatalf("JSON Lines: %v %v %v", src, ok, err)
	}
}
