package cpuprofile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchrig/benchrig/internal/exitcode"
)

// TestStart writes a profile, and refuses a path it cannot create as bad
// usage.
func TestStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := Start(path)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Errorf("profile %s: %v, want a non-empty file", path, err)
	}
	var u exitcode.UsageError
	if _, err := Start(filepath.Join(t.TempDir(), "no", "dir", "cpu.pprof")); !errors.As(err, &u) {
		t.Errorf("a path that cannot be created: %v, want a usage error", err)
	}
}
