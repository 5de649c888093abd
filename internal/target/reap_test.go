package target

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/cgroup"
	"github.com/benchrig/benchrig/internal/proc"
)

// markerSleeps lists the live processes running `sleep MARKER…`: argv[1]
// starts with marker.
func markerSleeps(marker string) []int {
	fs := proc.Default()
	pids, _ := fs.PIDs()
	var out []int
	for _, pid := range pids {
		args, err := fs.Cmdline(pid)
		if err == nil && len(args) == 2 && strings.HasSuffix(args[0], "sleep") && strings.HasPrefix(args[1], marker) && fs.Alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// waitMarkers polls until want processes run the marker (true) or 10 s
// pass; it returns what it found last.
func waitMarkers(marker string, want int) []int {
	var got []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got = markerSleeps(marker); len(got) == want {
			break
		}
	}
	return got
}

// newMarker returns a sleep duration unique to this test and process:
// "300.PID0N"; the sleeps it names are killed at the end of the test
// whatever happens.
func newMarker(t *testing.T, n int) string {
	m := fmt.Sprintf("300.%d0%d", os.Getpid(), n)
	t.Cleanup(func() {
		for _, pid := range markerSleeps(m) {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	})
	return m
}

// TestKill9ReapsTree starts, in a helper process that stands for benchrig
// (this test binary re-executed), a target that backgrounds a child and one
// that daemonises a grandchild with setsid, then kills the helper with
// SIGKILL: the watchdog must leave no process of either tree.
func TestKill9ReapsTree(t *testing.T) {
	need(t, "sh")
	need(t, "sleep")
	need(t, "setsid")
	for i, tc := range []struct {
		name, script string
		sleeps       int
	}{
		{"background child", "sleep %[1]s1 & wait", 1},
		{"daemonised grandchild", "(setsid sleep %[1]s2 &) ; sleep %[1]s3", 2},
		{"double fork, parent exits", "(sleep %[1]s4 &) ; exec sleep %[1]s5", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := newMarker(t, i)
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBenchrig$")
			cmd.Env = append(os.Environ(), "BENCHRIG_TARGET_REAP_SCRIPT="+fmt.Sprintf(tc.script, marker), "BENCHRIG_TARGET_HELPER_LOG="+t.TempDir())
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			var pid int
			if _, err := fmt.Fscanf(out, "pid %d\n", &pid); err != nil {
				t.Fatalf("helper printed no PID: %v", err)
			}
			if got := waitMarkers(marker, tc.sleeps); len(got) != tc.sleeps {
				t.Fatalf("%d sleeps of the target running, want %d", len(got), tc.sleeps)
			}
			if err := cmd.Process.Signal(unix.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			if left := waitMarkers(marker, 0); len(left) != 0 {
				t.Errorf("processes %v of the target survived kill -9 of the benchrig that started it", left)
			}
			// the watchdog kills and reaps it after the sleeps: give it the
			// same bounded time
			for deadline := time.Now().Add(wdKillTimeout + time.Second); proc.Default().Alive(pid) && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if proc.Default().Alive(pid) {
				t.Errorf("target %d survived", pid)
			}
		})
	}
}

// TestHelperBenchrig is the helper of TestKill9ReapsTree: it starts the
// script as a target, prints its PID and waits to be killed. It does
// nothing in a normal run.
func TestHelperBenchrig(t *testing.T) {
	script := os.Getenv("BENCHRIG_TARGET_REAP_SCRIPT")
	if script == "" {
		t.Skip("helper process for TestKill9ReapsTree")
	}
	spec := Spec{Name: "tree", Argv: []string{"sh", "-c", script}, LogDir: os.Getenv("BENCHRIG_TARGET_HELPER_LOG")}
	if os.Getenv("BENCHRIG_TARGET_HELPER_LIMITS") != "" {
		spec.Limits = &cgroup.Limits{Pids: 64}
	}
	p, err := Start(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("pid %d\n", p.PID())
	if name, _ := p.CgroupName(); name != "" {
		fmt.Printf("group %s\n", name)
	}
	time.Sleep(60 * time.Second) // killed by the parent test long before
	p.Stop(context.Background())
}

// TestStopReapsDaemons stops a target whose grandchild daemonised: Stop
// must end it too, and the PID sampled is the target's, not the
// watchdog's.
func TestStopReapsDaemons(t *testing.T) {
	need(t, "setsid")
	marker := newMarker(t, 7)
	spec := testSpec(t, "daemon", "sh", "-c", fmt.Sprintf("(setsid sleep %[1]s1 &) ; trap '' TERM; sleep %[1]s2", marker))
	spec.StopGrace = 200 * time.Millisecond
	p := startT(t, spec, nil)
	if got := waitMarkers(marker, 2); len(got) != 2 {
		t.Fatalf("sleeps %v, want 2", got)
	}
	args, _ := proc.Default().Cmdline(p.PID())
	if len(args) == 0 || args[0] != "sh" {
		t.Errorf("PID() %d runs %q, want the target (sh), not the watchdog", p.PID(), args)
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left := markerSleeps(marker); len(left) != 0 {
		t.Errorf("after Stop, %v still run", left)
	}
	if p.Alive() {
		t.Error("Alive after Stop")
	}
}

// TestNotReadyReapsDaemons: a target that daemonises its server and exits
// is "exited before ready", and the daemon is not left running.
func TestNotReadyReapsDaemons(t *testing.T) {
	need(t, "setsid")
	marker := newMarker(t, 8)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	spec := testSpec(t, "forker", "sh", "-c", fmt.Sprintf("setsid sleep %s1 & sleep 0.2; exit 0", marker))
	spec.Ready = ProbeSpec{TCP: "127.0.0.1:" + strconv.Itoa(port)}
	_, err = Start(context.Background(), spec, nil)
	if err == nil || !strings.Contains(err.Error(), "exited before ready") {
		t.Fatalf("Start = %v, want exited before ready", err)
	}
	if left := markerSleeps(marker); len(left) != 0 {
		t.Errorf("daemon %v left running after a failed start", left)
	}
}

// TestWatchdogTERMKillsTree: the watchdog's parent-death signal is SIGTERM;
// receiving it (here sent by hand) kills the whole tree, a daemon included,
// and the target counts as ended.
func TestWatchdogTERMKillsTree(t *testing.T) {
	need(t, "setsid")
	marker := newMarker(t, 9)
	p := startT(t, testSpec(t, "term", "sh", "-c", fmt.Sprintf("(setsid sleep %[1]s1 &) ; sleep %[1]s2", marker)), nil)
	if got := waitMarkers(marker, 2); len(got) != 2 {
		t.Fatalf("sleeps %v, want 2", got)
	}
	if err := unix.Kill(p.w.wd.Process.Pid, unix.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("target not ended 10 s after the watchdog's SIGTERM")
	}
	if left := waitMarkers(marker, 0); len(left) != 0 {
		t.Errorf("%v survive the watchdog's SIGTERM", left)
	}
	if got := p.ExitStatus(); got != "signal: killed" {
		t.Errorf("ExitStatus %q, want signal: killed", got)
	}
}
