package postgres

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/target"
)

// backendsLeft on this machine says whether any of the PIDs still runs,
// reading past the ones gone only once: a killed child (a zombie until
// reaped) counts as gone, and the wait moves to the next.
func TestBackendsLeftVisible(t *testing.T) {
	s := &PGServer{proc: &target.Attached{}}
	var cmds []*exec.Cmd
	var pids []int
	for range 3 {
		c := exec.Command("sleep", "30")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		cmds = append(cmds, c)
		pids = append(pids, c.Process.Pid)
	}
	from := 0
	for i, c := range cmds {
		if n, err := s.backendsLeft(context.Background(), pids, &from); err != nil || n != 1 || from != i {
			t.Fatalf("with %d of 3 gone: %d left, from %d, %v; want 1 from %d", i, n, from, err, i)
		}
		if err := c.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		// gone once the kernel marks it a zombie
		for deadline := time.Now().Add(5 * time.Second); from <= i && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			_, _ = s.backendsLeft(context.Background(), pids, &from)
		}
	}
	if n, err := s.backendsLeft(context.Background(), pids, &from); err != nil || n != 0 || from != 3 {
		t.Errorf("all gone: %d left, from %d, %v; want 0 from 3", n, from, err)
	}
}
