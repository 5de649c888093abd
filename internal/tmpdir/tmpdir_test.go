package tmpdir

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSweepRemovesOnlyOrphans(t *testing.T) {
	root := t.TempDir()
	mine, err := New(root, "pg")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mine + LockSuffix); err != nil {
		t.Fatalf("New made no lock file beside its directory: %v", err)
	}
	// a process that has exited: its directory is an orphan.
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Skip("no true(1)")
	}
	deadPID := strconv.Itoa(c.Process.Pid)
	// an old directory without a lock file (an older benchrig's), of a
	// dead PID: removed; the same but young: kept (New may be making it).
	dead := filepath.Join(root, "benchrig-run-"+deadPID+"-123")
	young := filepath.Join(root, "benchrig-run-"+deadPID+"-124")
	// a live process that is not us (PID 1).
	live := filepath.Join(root, "benchrig-redis-1-456")
	other := filepath.Join(root, "benchrig-notours")
	for _, d := range []string{dead, young, live, other} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * legacyAge)
	for _, d := range []string{dead, live, other} {
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
	}
	// an unlocked directory with a lock file, of a dead PID: removed.
	unlocked := filepath.Join(root, "benchrig-target-"+deadPID+"-789")
	if err := os.MkdirAll(unlocked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(unlocked, LockFile), []byte(deadPID+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	removed, err := Sweep(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 || !contains(removed, dead) || !contains(removed, unlocked) {
		t.Errorf("removed %v, want %s and %s", removed, dead, unlocked)
	}
	for _, d := range []string{mine, young, live, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if err := Remove(mine); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{mine, mine + LockSuffix} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("Remove left %s: %v", p, err)
		}
	}
}

// TestSweepAfterAKillAtAnyStep: a run killed after it made its lock file
// and before its directory leaves a lone lock file; killed after both, an
// unlocked pair. Sweep removes both at once (no age to wait: the lock file
// comes first, so a directory is never without one), and leaves a lone
// lock file that a live process holds.
func TestSweepAfterAKillAtAnyStep(t *testing.T) {
	root := t.TempDir()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Skip("no true(1)")
	}
	dead := strconv.Itoa(c.Process.Pid)
	lone := filepath.Join(root, "benchrig-run-"+dead+"-1"+LockSuffix)
	pair := filepath.Join(root, "benchrig-run-"+dead+"-2")
	for _, f := range []string{lone, pair + LockSuffix} {
		if err := os.WriteFile(f, []byte(dead+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(pair, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	mine, err := New(root, "pg") // held by this process
	if err != nil {
		t.Fatal(err)
	}
	removed, err := Sweep(root)
	if err != nil || len(removed) != 1 || removed[0] != pair {
		t.Errorf("Sweep removed %v, %v; want %s", removed, err, pair)
	}
	entries, _ := os.ReadDir(root)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{filepath.Base(mine), filepath.Base(mine) + LockSuffix}; strings.Join(left, ",") != strings.Join(want, ",") {
		t.Errorf("left %v, want only %v", left, want)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestSweepSparesLockedDirOfOtherNamespace: another process (this test
// binary re-executed) makes a directory whose name carries a PID that is
// dead here, as a run in another PID namespace would, and holds its lock.
// Sweep must leave it while the lock is held, and remove it once the holder
// is gone.
func TestSweepSparesLockedDirOfOtherNamespace(t *testing.T) {
	root := t.TempDir()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Skip("no true(1)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHolder$")
	cmd.Env = append(os.Environ(), "BENCHRIG_TMPDIR_HOLD="+root, "BENCHRIG_TMPDIR_PID="+strconv.Itoa(c.Process.Pid))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	held, ok := strings.CutPrefix(strings.TrimSpace(line), "dir ")
	if err != nil || !ok {
		t.Fatalf("helper said %q, %v", line, err)
	}
	if !strings.Contains(held, "-"+strconv.Itoa(c.Process.Pid)+"-") {
		t.Fatalf("helper's dir %s does not carry the dead PID", held)
	}
	if removed, err := Sweep(root); err != nil || len(removed) != 0 {
		t.Fatalf("Sweep removed %v (%v) while another process holds the lock", removed, err)
	}
	if _, err := os.Stat(held); err != nil {
		t.Fatalf("locked dir gone: %v", err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	removed, err := Sweep(root)
	if err != nil || len(removed) != 1 || removed[0] != held {
		t.Errorf("after the holder died, Sweep removed %v, %v; want %s", removed, err, held)
	}
}

// TestHelperHolder is the helper of TestSweepSparesLockedDirOfOtherNamespace.
func TestHelperHolder(t *testing.T) {
	root := os.Getenv("BENCHRIG_TMPDIR_HOLD")
	if root == "" {
		t.Skip("helper process")
	}
	pid, _ := strconv.Atoi(os.Getenv("BENCHRIG_TMPDIR_PID"))
	dir, err := newDir(root, "run", pid)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("dir %s\n", dir)
	time.Sleep(60 * time.Second) // killed by the parent long before
}
