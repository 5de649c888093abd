package target

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/proc"
)

func TestStopKillsGroupIgnoringTERM(t *testing.T) {
	sh := need(t, "sh")
	need(t, "sleep")
	spec := testSpec(t, "stubborn", sh, "-c", `trap "" TERM; sleep 60 & echo started; wait`)
	spec.StopGrace = 300 * time.Millisecond
	p, err := Start(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the child exists, so the group has two processes.
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := proc.Default().Group(p.PID())
		if err != nil {
			t.Fatal(err)
		}
		if len(m) >= 2 && strings.Contains(p.LogTail(1), "started") {
			break
		}
		if time.Now().After(deadline) {
			p.Stop(context.Background())
			t.Fatalf("group never had two processes: %v", m)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Concurrent, repeated Stops all see the same result.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.Stop(context.Background())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Stop %d: %v", i, err)
		}
	}
	if m, _ := proc.Default().Group(p.PID()); len(m) != 0 {
		t.Errorf("after Stop, group %d still has %v", p.PID(), m)
	}
	if p.Alive() {
		t.Error("Alive after Stop")
	}
	if got := p.ExitStatus(); got != "signal: killed" {
		t.Errorf("ExitStatus %q, want signal: killed (TERM was ignored)", got)
	}
	select {
	case <-p.Exited():
	default:
		t.Error("Exited not closed after Stop")
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Errorf("Stop again: %v", err)
	}
}

func TestStopGracefulTERM(t *testing.T) {
	bin := stallServer(t)
	spec := testSpec(t, "polite", bin, "-addr", "127.0.0.1:0")
	p, err := Start(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	listenAddr(t, p)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The stall server shuts down cleanly on SIGTERM.
	if got := p.ExitStatus(); got != "exit status 0" {
		t.Errorf("ExitStatus %q, want exit status 0", got)
	}
	waitGone(t, p.PID())
}

func TestStopCanceledContextKillsAtOnce(t *testing.T) {
	sh := need(t, "sh")
	spec := testSpec(t, "hurry", sh, "-c", `trap "" TERM; while :; do sleep 1; done`)
	spec.StopGrace = time.Minute
	p, err := Start(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error, 1)
	go func() { done <- p.Stop(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Stop with a canceled context waited for the grace period")
	}
	waitGone(t, p.PID())
}

func TestExitedAfterCrash(t *testing.T) {
	bin := stallServer(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	spec := testSpec(t, "crashy", bin, "-addr", addr, "-exit-after", "2")
	p := startT(t, spec, TCPProbe{Addr: addr})
	for i := 0; i < 2; i++ {
		if err := RunCheck(context.Background(), Check{URL: "http://" + addr + "/"}); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("server did not exit after -exit-after requests")
	}
	if got := p.ExitStatus(); got != "exit status 1" {
		t.Errorf("ExitStatus %q", got)
	}
	mustContain(t, p.LogTail(1), "exiting after 2 requests")
	if err := p.Stop(context.Background()); err != nil {
		t.Errorf("Stop after exit: %v", err)
	}
}

// TestPdeathsig starts a helper process (this test binary) that starts a
// target and then is killed: the kernel must kill the target too.
func TestPdeathsig(t *testing.T) {
	sleep := need(t, "sleep")
	// As a subreaper this test inherits the orphaned target and can reap
	// it, rather than leave a zombie to a PID 1 that may never reap.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Logf("cannot become a subreaper (%v): a zombie may remain", err)
	} else {
		t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperStarter$")
	cmd.Env = append(os.Environ(), "BENCHRIG_TARGET_HELPER="+sleep, "BENCHRIG_TARGET_HELPER_LOG="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	// The helper prints the target's PID.
	var pid int
	ch := make(chan error, 1)
	go func() {
		_, err := fmt.Fscanf(out, "pid %d\n", &pid)
		ch <- err
	}()
	select {
	case err := <-ch:
		if err != nil {
			t.Fatalf("read helper output: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("helper printed no PID")
	}
	if !procAlive(pid) {
		t.Fatalf("target %d not running", pid)
	}
	t.Cleanup(func() {
		if procAlive(pid) {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, 0, nil) // ECHILD if not ours: fine
	})
	if err := cmd.Process.Signal(unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for procAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("target %d survived the death of the benchrig that started it", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHelperStarter is the helper of TestPdeathsig; it does nothing in a
// normal run.
func TestHelperStarter(t *testing.T) {
	sleep := os.Getenv("BENCHRIG_TARGET_HELPER")
	if sleep == "" {
		t.Skip("helper process for TestPdeathsig")
	}
	p, err := Start(context.Background(), Spec{Name: "orphan", Argv: []string{sleep, "60"}, LogDir: os.Getenv("BENCHRIG_TARGET_HELPER_LOG")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("pid %d\n", p.PID())
	time.Sleep(30 * time.Second) // killed by the parent test long before
	p.Stop(context.Background())
}
