package proc

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// The client takes the CPUs it may use that a pinned target does not:
// none left, or no target pinning, gives "".
func TestBesideTarget(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	mine := CPUsOf(&set)
	if got := BesideTarget(""); got != "" {
		t.Errorf("unpinned target: %q, want \"\"", got)
	}
	if got := BesideTarget(FormatCPUList(mine)); got != "" {
		t.Errorf("a target on every CPU of mine: %q, want \"\"", got)
	}
	if len(mine) < 2 {
		t.Skipf("one CPU usable (%v): nothing to leave", mine)
	}
	got, err := ParseCPUList(BesideTarget(FormatCPUList(mine[:1])))
	if err != nil || !slices.Equal(got, mine[1:]) {
		t.Errorf("a target on CPU %d: %v (%v), want %v", mine[0], got, err, mine[1:])
	}
}
