package target

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
)

func TestPIDListeningOnStallServer(t *testing.T) {
	bin := stallServer(t)
	p := startT(t, testSpec(t, "stall-port", bin, "-addr", "127.0.0.1:0"), nil)
	addr := listenAddr(t, p)
	_, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(portStr)
	got, err := PIDListeningOn(port)
	if err != nil {
		t.Fatal(err)
	}
	if got != p.PID() {
		t.Errorf("PIDListeningOn(%d) = %d, want the stall server %d", port, got, p.PID())
	}
	// Attach to it by that PID: measured but never stopped.
	a, err := Attach(got)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Alive() || a.Comm() != "stall" {
		t.Errorf("attached Alive %v Comm %q", a.Alive(), a.Comm())
	}
	if err := a.Stop(context.Background()); err != nil || !p.Alive() {
		t.Errorf("Attached.Stop: %v; server alive %v", err, p.Alive())
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a.Alive() {
		t.Error("attached process still Alive after its server stopped")
	}
	if _, err := PIDListeningOn(port); err == nil || !strings.Contains(err.Error(), "nothing listens") {
		t.Errorf("after stop: %v", err)
	}
}

func TestPIDListeningOnOwnListener(t *testing.T) {
	ln6, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	defer ln6.Close()
	port := ln6.Addr().(*net.TCPAddr).Port
	got, err := PIDListeningOn(port)
	if err != nil {
		t.Fatal(err)
	}
	if got != selfPID() {
		t.Errorf("PIDListeningOn(%d) = %d, want this test process %d", port, got, selfPID())
	}
}
