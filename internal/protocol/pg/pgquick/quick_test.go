package pgquick

import (
	"testing"

	"github.com/benchrig/benchrig/internal/quick"
)

// The any path's default form is named in the variant like the others:
// --path any measures any[param], its suite path "any-param", beside
// "any-array" (issue 26, item 7).
func TestPGAnyFormNamed(t *testing.T) {
	p := Quick{Paths: []string{"any", "any[array]", "any/generic"}, PGBatch: "roundtrips", Timeout: 1e10}
	p.Changed = func(string) bool { return false }
	paths, order, err := p.pathDocs()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"any-param", "any-array", "any-param-generic"}
	if len(order) != len(want) {
		t.Fatalf("paths %v, want %v", order, want)
	}
	for i, k := range want {
		if order[i] != k {
			t.Errorf("path %d is %q, want %q", i, order[i], k)
		}
	}
	if f := paths["any-param"].(quick.Doc)["pg"].(quick.Doc)["form"]; f != "param" {
		t.Errorf("--path any: form %v, want param", f)
	}
}

// --skip-decode marks every path of the run, and its label says so.
func TestPGSkipDecode(t *testing.T) {
	p := Quick{Paths: []string{"any", "prepared-one"}, PGBatch: "roundtrips", Timeout: 1e10, SkipDecode: true}
	p.Changed = func(string) bool { return false }
	paths, order, err := p.pathDocs()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range order {
		if sd := paths[k].(quick.Doc)["pg"].(quick.Doc)["skip_decode"]; sd != true {
			t.Errorf("path %s: skip_decode %v, want true", k, sd)
		}
	}
}
