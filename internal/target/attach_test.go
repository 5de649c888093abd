package target

import (
	"context"
	"os"
	"strings"
	"testing"
)

func selfPID() int { return os.Getpid() }

func TestAttachSelfAndMissing(t *testing.T) {
	a, err := Attach(selfPID())
	if err != nil {
		t.Fatal(err)
	}
	if a.PID() != selfPID() || !a.Alive() || a.Comm() == "" {
		t.Errorf("Attach(self): pid %d alive %v comm %q", a.PID(), a.Alive(), a.Comm())
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
