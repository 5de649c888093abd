package run

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/proc"
)

// addrDriver says its server's address, as the HTTP and gRPC drivers do.
type addrDriver string

func (a addrDriver) Addr() string { return string(a) }

// A server on loopback is on this machine; one elsewhere, or a driver
// that does not say, is not.
func TestOnLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:80": true, "[::1]:443": true, "localhost:6379": true,
		"/var/run/postgresql:5432": true, "10.0.0.7:80": false, "example.com:80": false, "no-port": false} {
		if got := onLoopback(addrDriver(addr)); got != want {
			t.Errorf("onLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
	if onLoopback(struct{}{}) {
		t.Error("a driver without Addr is on loopback")
	}
}

// The client takes the CPUs it may use that a pinned target does not:
// none left, or no target pinning, gives "".
func TestBesideTarget(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	mine := proc.CPUsOf(&set)
	if got := besideTarget(""); got != "" {
		t.Errorf("unpinned target: %q, want \"\"", got)
	}
	if got := besideTarget(proc.FormatCPUList(mine)); got != "" {
		t.Errorf("a target on every CPU of mine: %q, want \"\"", got)
	}
	if len(mine) < 2 {
		t.Skipf("one CPU usable (%v): nothing to leave", mine)
	}
	got, err := proc.ParseCPUList(besideTarget(proc.FormatCPUList(mine[:1])))
	if err != nil || !slices.Equal(got, mine[1:]) {
		t.Errorf("a target on CPU %d: %v (%v), want %v", mine[0], got, err, mine[1:])
	}
}
