package target

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
)

const tcpHeader = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"

func TestListenerPIDFixture(t *testing.T) {
	f := newFakeProc(t)
	// 127.0.0.1:3000 listening (inode 111); 0.0.0.0:3000 established (not
	// a listener); 0.0.0.0:5432 listening (inode 222); 0.0.0.0:8080
	// listening (inode 444) but held by no visible process.
	f.write("net/tcp", tcpHeader+
		"   0: 0100007F:0BB8 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0000000000000000 100 0 0 10 0\n"+
		"   1: 00000000:0BB8 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 999 1 0000000000000000 100 0 0 10 0\n"+
		"   2: 00000000:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   26        0 222 1 0000000000000000 100 0 0 10 0\n"+
		"   3: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000    0        0 444 1 0000000000000000 100 0 0 10 0\n")
	// [::]:6379 listening (inode 333).
	f.write("net/tcp6", tcpHeader+
		"   0: 00000000000000000000000000000000:18EB 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 333 1 0000000000000000 100 0 0 10 0\n")
	f.proc(50, "node", 'S', 1, 50)
	f.fd(50, 0, "/dev/null")
	f.fd(50, 21, "socket:[111]")
	// postgres master 60 and a forked backend 61 share the socket.
	f.proc(60, "postgres", 'S', 1, 60)
	f.proc(61, "postgres", 'S', 60, 60)
	f.fd(61, 5, "socket:[222]")
	f.fd(60, 5, "socket:[222]")
	f.proc(70, "redis-server", 'S', 1, 70)
	f.fd(70, 6, "socket:[333]")

	for port, want := range map[int]int{3000: 50, 5432: 60, 6379: 70} {
		got, err := listenerPID(f.root, port)
		if err != nil || got != want {
			t.Errorf("listenerPID(%d) = %d, %v; want %d", port, got, err, want)
		}
	}
	for port, want := range map[int]string{
		0:     "want a TCP port 1-65535",
		70000: "want a TCP port 1-65535",
		4000:  "port 4000: nothing listens on it",
		8080:  "port 8080: a socket listens on it but no visible process holds it",
	} {
		_, err := listenerPID(f.root, port)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("listenerPID(%d) = %v, want %q", port, err, want)
		}
	}
}

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
