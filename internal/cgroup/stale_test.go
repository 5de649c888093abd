package cgroup

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRemoveStale(t *testing.T) {
	h := hierarchy(t)
	live := create(t, h, "live", Limits{Pids: 16})
	liveCmd := start(t, live, nil, "sleep", "30")

	// A benchrig that makes a group, starts sleep in it and is killed.
	owner := exec.Command(os.Args[0])
	owner.Env = append(os.Environ(), childEnv+"=owner")
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	_ = owner.Process.Kill()
	_ = owner.Wait()
	dirs := strings.Fields(line)
	if err != nil || len(dirs) == 0 || !strings.HasPrefix(dirs[0], "/") {
		t.Fatalf("the owner child said %q (%v)", line, err)
	}
	stale := &Group{h: h, order: dirs}
	t.Cleanup(func() { // when the test fails before RemoveStale
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = stale.Remove(ctx)
	})
	left, err := stale.PIDs()
	if err != nil || len(left) == 0 {
		t.Fatalf("nothing running in the stale group %v: %v, %v", dirs, left, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	names, err := RemoveStale(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	name := dirs[0][strings.LastIndexByte(dirs[0], '/')+1:]
	if !slices.Contains(names, name) || slices.Contains(names, live.Name()) {
		t.Errorf("RemoveStale removed %v; want %s and not %s", names, name, live.Name())
	}
	gone(t, stale)
	dead(t, h, left)
	for _, dir := range live.Dirs() {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("the live group lost %s: %v", dir, err)
		}
	}
	if !h.procFS.Alive(liveCmd.Process.Pid) {
		t.Error("the live group's process was killed")
	}
}
