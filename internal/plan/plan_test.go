package plan

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/benchrig/benchrig/internal/exitcode"
)

// TestLoadAndRecorded: a suite's plan, recorded as its resolved suite,
// re-expands to the same entries; --set applies; a suite that does not
// load is a usage error.
func TestLoadAndRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(`name: t
targets: {web: {address: {addr: "127.0.0.1:8080"}}}
paths: {root: {http: {url: "http://127.0.0.1:8080/"}}}
matrix: {targets: [web], paths: [root], connections: [8]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, p, err := Load(path, []string{"connections=4,64"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Cells) != 2 {
		t.Errorf("--set connections=4,64: %d cells, want 2", len(p.Cells))
	}
	resolved, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	got, err := RecordedEntries(resolved, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := Entries(p); len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("recorded entries %+v, want %+v", got, want)
	}
	var u exitcode.UsageError
	if _, _, err := Load(filepath.Join(t.TempDir(), "none.yaml"), nil, false); !errors.As(err, &u) {
		t.Errorf("a missing suite: %v, want a usage error", err)
	}
}
