package tmpdir

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestSweepRemovesOnlyOrphans(t *testing.T) {
	root := t.TempDir()
	mine, err := New(root, "pg")
	if err != nil {
		t.Fatal(err)
	}
	// a process that has exited: its directory is an orphan.
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Skip("no true(1)")
	}
	dead := filepath.Join(root, "benchrig-run-"+strconv.Itoa(c.Process.Pid)+"-123")
	// a live process that is not us (PID 1).
	live := filepath.Join(root, "benchrig-redis-1-456")
	other := filepath.Join(root, "benchrig-notours")
	for _, d := range []string{dead, live, other} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := Sweep(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != dead {
		t.Errorf("removed %v, want only %s", removed, dead)
	}
	for _, d := range []string{mine, live, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}
