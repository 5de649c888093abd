package target

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/secret"
)

// TestOutput: stdout and stderr apart, a non-zero exit an error (with what
// was printed), a missing program an error, output capped.
func TestOutput(t *testing.T) {
	need(t, "sh")
	ctx := context.Background()
	out, errOut, err := Output(ctx, Command{Argv: []string{"sh", "-c", "echo out; echo err >&2"}})
	if err != nil || string(out) != "out\n" || string(errOut) != "err\n" {
		t.Errorf("got %q, %q, %v; want out, err, nil", out, errOut, err)
	}
	out, _, err = Output(ctx, Command{Argv: []string{"sh", "-c", "echo partial; exit 3"}})
	if err == nil || err.Error() != "exit status 3" || string(out) != "partial\n" {
		t.Errorf("got %q, %v; want partial and exit status 3", out, err)
	}
	if _, _, err := Output(ctx, Command{Argv: []string{"/nonexistent/program"}}); err == nil {
		t.Error("a missing program ran")
	}
	if _, _, err := Output(ctx, Command{}); err == nil {
		t.Error("no program ran")
	}
	out, _, err = Output(ctx, Command{Argv: []string{"sh", "-c", "head -c 200000 /dev/zero"}})
	if err != nil || len(out) != MaxOutput {
		t.Errorf("got %d bytes, %v; want %d", len(out), err, MaxOutput)
	}
	dir := t.TempDir()
	out, _, err = Output(ctx, Command{Argv: []string{"sh", "-c", "pwd; echo $FLAVOUR"}, Dir: dir, Env: []string{"FLAVOUR=lts"}})
	if err != nil || string(out) != dir+"\nlts\n" {
		t.Errorf("got %q, %v; want the dir and the env entry", out, err)
	}
}

// TestOutputLeavesNothing: a program that ignores its arguments and serves
// (a child in the background, a setsid grandchild) is killed with its whole
// tree at the timeout; one that answers at once but leaves a setsid
// grandchild running has it killed too.
func TestOutputLeavesNothing(t *testing.T) {
	need(t, "sh")
	need(t, "setsid")
	need(t, "sleep")
	ctx := context.Background()
	marker := newMarker(t, 21)
	start := time.Now()
	_, _, err := Output(ctx, Command{Argv: []string{"sh", "-c", fmt.Sprintf("sleep %[1]s1 & (setsid sleep %[1]s2 &); wait", marker)}, Timeout: 500 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within 500ms") {
		t.Errorf("got %v; want no answer within 500ms", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v, want about the timeout", d)
	}
	if left := markerSleeps(marker); len(left) != 0 {
		t.Errorf("processes %v of a program past its timeout survived Output", left)
	}

	marker = newMarker(t, 22)
	out, _, err := Output(ctx, Command{Argv: []string{"sh", "-c", fmt.Sprintf("(setsid sleep %s3 > /dev/null 2>&1 &); echo v1.2", marker)}})
	if err != nil || string(out) != "v1.2\n" {
		t.Errorf("got %q, %v; want v1.2", out, err)
	}
	if left := markerSleeps(marker); len(left) != 0 {
		t.Errorf("the setsid grandchild %v of a program that answered survived Output", left)
	}

	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	marker = newMarker(t, 23)
	if _, _, err := Output(cctx, Command{Argv: []string{"sh", "-c", fmt.Sprintf("sleep %s4", marker)}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v; want the context's end", err)
	}
	if left := markerSleeps(marker); len(left) != 0 {
		t.Errorf("processes %v survived the context's end", left)
	}
}

// TestOutputKill9: a benchrig killed with SIGKILL while a probe runs
// leaves nothing of the probe's tree behind.
func TestOutputKill9(t *testing.T) {
	need(t, "sh")
	need(t, "setsid")
	marker := newMarker(t, 24)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperOutput$")
	cmd.Env = append(os.Environ(), "BENCHRIG_TARGET_OUTPUT_SCRIPT="+fmt.Sprintf("sleep %[1]s1 & (setsid sleep %[1]s2 &); wait", marker))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if got := waitMarkers(marker, 2); len(got) != 2 {
		t.Fatalf("%d sleeps of the probe running, want 2", len(got))
	}
	_ = cmd.Process.Signal(unix.SIGKILL)
	_ = cmd.Wait()
	if left := waitMarkers(marker, 0); len(left) != 0 {
		t.Errorf("processes %v of the probe survived kill -9 of the benchrig that ran it", left)
	}
}

// TestHelperOutput is the helper of TestOutputKill9: it runs the script
// through Output with a long timeout. It does nothing in a normal run.
func TestHelperOutput(t *testing.T) {
	script := os.Getenv("BENCHRIG_TARGET_OUTPUT_SCRIPT")
	if script == "" {
		t.Skip("helper process for TestOutputKill9")
	}
	_, _, _ = Output(context.Background(), Command{Argv: []string{"sh", "-c", script}, Timeout: time.Minute})
}

// TestChildEnvironment: a withheld variable reaches neither a target, nor
// its watchdog, nor a probe; the target's own entries reach it (later
// entries winning) and not its watchdog, whose environment is empty.
func TestChildEnvironment(t *testing.T) {
	need(t, "sh")
	const name = "BENCHRIG_TEST_WITHHELD_SECRET"
	t.Setenv(name, "planted-7731")
	t.Setenv("BENCHRIG_TEST_PLAIN", "plain")
	secret.Withhold(name)

	out, _, err := Output(context.Background(), Command{Argv: []string{"sh", "-c", "echo ${" + name + ":-absent} $BENCHRIG_TEST_PLAIN"}})
	if err != nil || string(out) != "absent plain\n" {
		t.Errorf("probe: got %q, %v; want the withheld variable absent, the plain one kept", out, err)
	}

	spec := testSpec(t, "env", "sh", "-c", "sleep 30")
	spec.Env = []string{"TARGET_ONLY=first", "TARGET_ONLY=mine"}
	p := startT(t, spec, nil)
	environ := func(pid int) []byte {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// The watchdog forks the target and then it execs: until the exec the
	// child's environment is the watchdog's (empty). Wait for the exec.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if cl, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID())); bytes.HasSuffix(cl, []byte("sleep 30\x00")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the target did not exec sh -c 'sleep 30' within a minute")
		}
	}
	te, we := environ(p.PID()), environ(p.w.wd.Process.Pid)
	if bytes.Contains(te, []byte("planted-7731")) || bytes.Contains(we, []byte("planted-7731")) {
		t.Errorf("the withheld variable reached the target or its watchdog")
	}
	if !bytes.Contains(te, []byte("\x00TARGET_ONLY=mine\x00")) || bytes.Contains(te, []byte("TARGET_ONLY=first")) || !bytes.Contains(te, []byte("BENCHRIG_TEST_PLAIN=plain")) {
		t.Errorf("the target's environment lacks its own entry (the last one) or benchrig's: %q", te)
	}
	for _, kv := range bytes.Split(bytes.TrimSuffix(we, []byte{0}), []byte{0}) {
		if len(kv) > 0 && !bytes.HasPrefix(kv, []byte("GOCOVERDIR=")) {
			t.Errorf("the watchdog's environment holds %q", kv)
		}
	}
	if st, err := proc.Default().Stat(p.w.wd.Process.Pid); err != nil || st.PPID != os.Getpid() {
		t.Errorf("read the watchdog's environment from %d: not this test's child (%v)", p.w.wd.Process.Pid, err)
	}
}
