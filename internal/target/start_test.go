package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/proc"
)

func TestStartReadyTCP(t *testing.T) {
	bin := stallServer(t)
	port := freePort(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	spec := testSpec(t, "stall-tcp", bin, "-addr", addr)
	spec.Ready = ProbeSpec{TCP: addr}
	p := startT(t, spec, nil)

	if !p.Alive() || p.ExitStatus() != "" {
		t.Fatalf("Alive %v, ExitStatus %q after a good start", p.Alive(), p.ExitStatus())
	}
	if p.PID() <= 0 || p.Name() != "stall-tcp" {
		t.Errorf("PID %d, Name %q", p.PID(), p.Name())
	}
	if got := filepath.Dir(p.LogPath()); got != spec.LogDir {
		t.Errorf("log %s not in LogDir %s", p.LogPath(), spec.LogDir)
	}
	if got := listenAddr(t, p); got != addr {
		t.Errorf("server says it listens on %s, want %s", got, addr)
	}
	// The target leads its own process group.
	st, err := proc.Default().Stat(p.PID())
	if err != nil {
		t.Fatal(err)
	}
	if st.PGRP != p.PID() {
		t.Errorf("pgrp %d, want the target's own pid %d", st.PGRP, p.PID())
	}
	if p.StartupTime() <= 0 {
		t.Errorf("StartupTime %v", p.StartupTime())
	}
	if err := RunCheck(context.Background(), Check{URL: "http://" + addr + "/", BodyContains: "hello"}); err != nil {
		t.Error(err)
	}
}

func TestStartReadyHTTP(t *testing.T) {
	bin := stallServer(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	spec := testSpec(t, "stall-http", bin, "-addr", addr)
	p := startT(t, spec, HTTPProbe{URL: "http://" + addr + "/", Status: 200})
	if err := (HTTPProbe{URL: "http://" + addr + "/"}).Ready(context.Background()); err != nil {
		t.Errorf("probe after a ready start: %v", err)
	}
	if !p.Alive() {
		t.Fatal("not alive")
	}
}

func TestStartHTTPWrongStatus(t *testing.T) {
	bin := stallServer(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	spec := testSpec(t, "stall-204", bin, "-addr", addr)
	spec.StartTimeout = 700 * time.Millisecond
	spec.Ready = ProbeSpec{HTTP: "http://" + addr + "/", Status: 204}
	_, err := Start(context.Background(), spec, nil)
	if err == nil {
		t.Fatal("Start succeeded although the server never answers 204")
	}
	mustContain(t, err.Error(), `target "stall-204": not ready after 700ms`, "status 200, want 204", "(log: "+spec.LogDir)
}

func TestStartMissingCommand(t *testing.T) {
	spec := testSpec(t, "x", "nosuchcmd-benchrig")
	_, err := Start(context.Background(), spec, nil)
	if err == nil {
		t.Fatal("no error")
	}
	want := `target "x": start "nosuchcmd-benchrig": executable file not found in $PATH`
	if err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("error does not wrap exec.ErrNotFound")
	}
	if ents, _ := os.ReadDir(spec.LogDir); len(ents) != 0 {
		t.Errorf("log dir not empty after a failed start: %v", ents)
	}

	spec = testSpec(t, "y", "./no/such/file")
	_, err = Start(context.Background(), spec, nil)
	if err == nil {
		t.Fatal("no error for a missing path")
	}
	mustContain(t, err.Error(), `target "y": start "./no/such/file": no such file or directory`)
}

func TestStartBadSpec(t *testing.T) {
	cases := []struct {
		name string
		spec Spec
		want string
	}{
		{"no argv", Spec{Name: "a"}, `target "a": spec: argv: empty`},
		{"bad env", Spec{Name: "b", Argv: []string{"true"}, Env: []string{"OK=1", "secretvalue"}}, `target "b": spec: env[1]: want KEY=VALUE`},
		{"bad cpus", Spec{Name: "c", Argv: []string{"true"}, CPUs: "1-0"}, `cpus: cpu list "1-0": range "1-0" is reversed`},
		{"missing dir", Spec{Name: "d", Argv: []string{"true"}, Dir: "/no/such/dir"}, `target "d": spec: dir: stat /no/such/dir: no such file or directory`},
		{"both probes", Spec{Name: "e", Argv: []string{"true"}, Ready: ProbeSpec{TCP: "127.0.0.1:1", HTTP: "http://127.0.0.1:1/"}}, "set one of tcp and http"},
		{"bad tcp", Spec{Name: "f", Argv: []string{"true"}, Ready: ProbeSpec{TCP: "localhost"}}, `ready.tcp: "localhost": want host:port`},
		{"bad url", Spec{Name: "g", Argv: []string{"true"}, Ready: ProbeSpec{HTTP: "ftp://u:hunter2@h/"}}, `ready.http: "ftp://u:[redacted]@h/": want an http:// or https:// URL`},
		{"negative timeout", Spec{Name: "h", Argv: []string{"true"}, StartTimeout: -time.Second}, "start_timeout -1s: must not be negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.spec.LogDir = t.TempDir()
			_, err := Start(context.Background(), c.spec, nil)
			if err == nil {
				t.Fatal("no error")
			}
			mustContain(t, err.Error(), c.want)
			if strings.Contains(err.Error(), "secretvalue") || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error reveals a secret: %v", err)
			}
		})
	}
}

func TestStartNeverReady(t *testing.T) {
	sleep := need(t, "sleep")
	port := freePort(t)
	spec := testSpec(t, "sleepy", sleep, "30")
	spec.StartTimeout = 500 * time.Millisecond
	spec.Ready = ProbeSpec{TCP: fmt.Sprintf("127.0.0.1:%d", port)}
	_, err := Start(context.Background(), spec, nil)
	if err == nil {
		t.Fatal("Start succeeded although nothing listens")
	}
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("error %T is not a *StartError", err)
	}
	mustContain(t, err.Error(), `target "sleepy": not ready after 500ms waiting for port `, ": dial tcp 127.0.0.1:", "connection refused", "(log: "+spec.LogDir+"/sleepy.log)")
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
	if !errors.Is(err, unix.ECONNREFUSED) {
		t.Errorf("error does not wrap ECONNREFUSED: %v", err)
	}
	assertNoSleep30(t, sleep)
}

// assertNoSleep30 checks that no "sleep 30" started by this test binary is
// left: every child of ours running sleep must be gone.
func assertNoSleep30(t *testing.T, sleep string) {
	t.Helper()
	fs := proc.Default()
	all, err := fs.PIDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range all {
		st, err := fs.Stat(pid)
		if err == nil && !st.Exited() && st.Comm == filepath.Base(sleep) && descendsFrom(fs, pid, os.Getpid()) {
			t.Errorf("child %d (%s) of the test is still running", pid, st.Comm)
		}
	}
}

func TestStartExitsEarly(t *testing.T) {
	sh := need(t, "sh")
	spec := testSpec(t, "crash", sh, "-c", "echo starting; echo 'boom: port in use' >&2; exit 3")
	spec.Ready = ProbeSpec{TCP: fmt.Sprintf("127.0.0.1:%d", freePort(t))}
	_, err := Start(context.Background(), spec, nil)
	if err == nil {
		t.Fatal("Start succeeded although the process exited")
	}
	mustContain(t, err.Error(), `target "crash": exited before ready: exit status 3`, "boom: port in use", "starting", "(log: "+spec.LogDir)
	var se *StartError
	if errors.As(err, &se) {
		if b, rerr := os.ReadFile(se.LogPath); rerr != nil || !strings.Contains(string(b), "boom") {
			t.Errorf("log %s: %q, %v", se.LogPath, b, rerr)
		}
	}
}

func TestStartOccupiedPort(t *testing.T) {
	sleep := need(t, "sleep")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	spec := testSpec(t, "late", sleep, "30")
	spec.Ready = ProbeSpec{TCP: ln.Addr().String()}
	_, err = Start(context.Background(), spec, nil)
	if err == nil {
		t.Fatal("Start trusted a port another process already serves")
	}
	mustContain(t, err.Error(), "is ready before the target started")
	assertNoSleep30(t, sleep)
}

func TestStartCanceled(t *testing.T) {
	sleep := need(t, "sleep")
	spec := testSpec(t, "cancel", sleep, "30")
	spec.Ready = ProbeSpec{TCP: fmt.Sprintf("127.0.0.1:%d", freePort(t))}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	_, err := Start(ctx, spec, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	mustContain(t, err.Error(), "start canceled while waiting for tcp 127.0.0.1:")
	assertNoSleep30(t, sleep)
}
