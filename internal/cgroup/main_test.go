package cgroup

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childEnv makes the test binary act as one of the children below.
const childEnv = "CGROUP_TEST_CHILD"

// TestMain makes the test binary the exec shim when called as one (as
// cmd/benchrig's main does with MaybeRunShim), or a test child.
func TestMain(m *testing.M) {
	MaybeRunShim()
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "busy": // spin on every CPU until killed
		for range runtime.GOMAXPROCS(0) - 1 {
			go spin()
		}
		spin()
	case "owner": // a benchrig that makes a group, starts sleep in it and waits to be killed
		err := orphanGroup()
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "unknown %s=%s\n", childEnv, os.Getenv(childEnv))
	os.Exit(2)
}

func spin() {
	for n := 0; ; n++ {
	}
}

func orphanGroup() error {
	h, err := Detect()
	if err != nil {
		return err
	}
	g, err := h.Create("stale", Limits{Pids: 16})
	if err != nil {
		return err
	}
	cmd, err := shimCommand(g, nil, "sleep", "30")
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		pids, err := g.PIDs()
		if err != nil {
			return err
		}
		if slices.Contains(pids, cmd.Process.Pid) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sleep (pid %d) not in %s after 5 s", cmd.Process.Pid, g.Name())
		}
	}
	fmt.Println(strings.Join(g.Dirs(), " "))
	select {}
}

// shimCommand is argv started in g through the exec shim, as benchrig
// starts a target.
func shimCommand(g *Group, env []string, argv ...string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, ShimArgs(g, argv)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	return cmd, nil
}

// hierarchy returns the machine's hierarchy, skipping the test when there
// is none usable, or failing it under CI=true.
func hierarchy(t *testing.T) *Hierarchy {
	t.Helper()
	why := ""
	h, err := Detect()
	switch {
	case os.Geteuid() != 0:
		why = "not root"
	case err != nil:
		why = err.Error()
	}
	if why == "" {
		return h
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no usable cgroup hierarchy (CI=true, so this fails): %s", why)
	}
	t.Skipf("no usable cgroup hierarchy: %s", why)
	return nil
}

// create makes a group removed at the end of the test, which also checks
// nothing of it is left.
func create(t *testing.T, h *Hierarchy, name string, l Limits) *Group {
	t.Helper()
	g, err := h.Create(name, l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := g.Remove(ctx); err != nil {
			t.Error(err)
		}
		gone(t, g)
	})
	return g
}

// start starts argv in g and waits until it is in g.
func start(t *testing.T, g *Group, env []string, argv ...string) *exec.Cmd {
	t.Helper()
	return startWith(t, g, func(*exec.Cmd) {}, env, argv...)
}

// startWith is start with the command set up by setup first.
func startWith(t *testing.T, g *Group, setup func(*exec.Cmd), env []string, argv ...string) *exec.Cmd {
	t.Helper()
	cmd, err := shimCommand(g, env, argv...)
	if err != nil {
		t.Fatal(err)
	}
	setup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		pids, err := g.PIDs()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pids {
			if p == cmd.Process.Pid {
				return cmd
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v: pid %d not in %s after 5 s (in it: %v)", argv, cmd.Process.Pid, g.Name(), pids)
		}
	}
}

// gone fails t when any directory of g is left.
func gone(t *testing.T, g *Group) {
	t.Helper()
	for _, dir := range g.Dirs() {
		if _, err := os.Stat(dir); err == nil || !os.IsNotExist(err) {
			t.Errorf("%s left behind (%v)", dir, err)
		}
	}
}

// dead fails t when any of pids is still running.
func dead(t *testing.T, h *Hierarchy, pids []int) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var alive []int
		for _, p := range pids {
			if h.procFS.Alive(p) {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v still running", alive)
		}
	}
}

// killedBy reports whether err is the exit of a process killed by sig.
func killedBy(err error, sig syscall.Signal) bool {
	ee, ok := err.(*exec.ExitError)
	if !ok {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}
