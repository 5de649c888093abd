package target

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func selfPID() int { return os.Getpid() }

func TestAttachChildAndMissing(t *testing.T) {
	child := exec.Command(need(t, "sleep"), "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	a, err := Attach(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if a.PID() != child.Process.Pid || !a.Alive() || a.Comm() != "sleep" {
		t.Errorf("Attach(child): pid %d alive %v comm %q", a.PID(), a.Alive(), a.Comm())
	}
	if err := a.Stop(context.Background()); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if !a.Alive() {
		t.Error("Stop of an attached process must not stop it")
	}
	// PIDs are at most 2^22 on Linux.
	_, err = Attach(1 << 23)
	if err == nil || !strings.Contains(err.Error(), "no such process") {
		t.Errorf("Attach(missing) = %v", err)
	}
}

// TestAttachRefusesOwnTree: benchrig itself, its parent and PID 1 hold
// benchrig in their trees: attaching to them is refused at once, saying
// why.
func TestAttachRefusesOwnTree(t *testing.T) {
	for _, pid := range []int{selfPID(), os.Getppid(), 1} {
		start := time.Now()
		_, err := Attach(pid)
		if err == nil || !strings.Contains(err.Error(), "benchrig itself runs in its process tree") {
			t.Errorf("Attach(%d) = %v; want a refusal", pid, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("Attach(%d) took %v", pid, d)
		}
	}
}

func TestAttachStartedProcess(t *testing.T) {
	sleep := need(t, "sleep")
	p := startT(t, testSpec(t, "attach-me", sleep, "30"), nil)
	var tg Target = p
	a, err := Attach(tg.PID())
	if err != nil {
		t.Fatal(err)
	}
	if a.Comm() != "sleep" || !a.Alive() {
		t.Errorf("Comm %q Alive %v", a.Comm(), a.Alive())
	}
	if err := tg.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a.Alive() {
		t.Error("Alive after the process was stopped")
	}
}
