//go:build linux

package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFileHeldProcess reads a real shell's stat, schedstat and children
// through held descriptors, checks them against the path readers, and
// checks that once the shell is reaped its descriptors say ESRCH: a held
// descriptor never reads another process that got the same PID.
func TestFileHeldProcess(t *testing.T) {
	if !IsProcfs(DefaultRoot) {
		t.Skip("no procfs at " + DefaultRoot)
	}
	if IsProcfs(t.TempDir()) {
		t.Errorf("IsProcfs says a temporary directory is a procfs")
	}
	fs := Default()
	cmd := exec.Command("sh", "-c", "sleep 300.1 & sleep 300.2 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	reaped := false
	t.Cleanup(func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		if !reaped {
			_ = cmd.Wait()
		}
	})
	task := fs.Path(strconv.Itoa(pid), "task", strconv.Itoa(pid))
	stat, err := OpenFile(fs.Path(strconv.Itoa(pid), "stat"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer stat.Close()
	sched, err := OpenFile(task+"/schedstat", true)
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Close()
	kids, err := OpenFile(task+"/children", true)
	if err != nil {
		t.Skipf("no children file (CONFIG_PROC_CHILDREN): %v", err)
	}
	defer kids.Close()
	if !stat.Held() || !kids.Held() {
		t.Fatalf("files not held")
	}

	// The shell forks its two sleeps: wait for both, then compare.
	buf := make([]byte, 64)
	var got []int
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < 2 && time.Now().Before(deadline) {
		if got, err = kids.ReadChildren(&buf, got[:0]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	tab, err := fs.Table()
	if err != nil {
		t.Fatal(err)
	}
	if want := tab.Children(pid); len(got) != 2 || !reflect.DeepEqual(slices.Sorted(slices.Values(got)), want) {
		t.Errorf("children file lists %v, the table says %v", got, want)
	}
	// Two readings through the descriptor and one by path: the shell
	// waits, so nothing changes between them.
	for range 2 {
		held, err := stat.ReadStat(make([]byte, 512))
		if err != nil {
			t.Fatal(err)
		}
		byPath, err := fs.ReadStat(pid, make([]byte, 512))
		if err != nil || held != byPath {
			t.Errorf("held stat %+v, by path %+v, %v", held, byPath, err)
		}
		ns, err := sched.ReadSchedstat(buf)
		nsPath, err2 := fs.ReadSchedstat(pid, buf)
		if err != nil || err2 != nil || ns != nsPath {
			t.Errorf("held schedstat %d, %v; by path %d, %v", ns, err, nsPath, err2)
		}
	}

	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	reaped = true
	if _, err := stat.ReadStat(buf); !Vanished(err) || !errors.Is(err, syscall.ESRCH) {
		t.Errorf("stat of a reaped process: %v, want ESRCH", err)
	}
	if _, err := sched.ReadSchedstat(buf); !Vanished(err) {
		t.Errorf("schedstat of a reaped process: %v, want it vanished", err)
	}
	if got, err := kids.ReadChildren(&buf, nil); err != nil || len(got) != 0 {
		t.Errorf("children of a reaped process: %v, %v; want none", got, err)
	}
}

// TestFileByPath reads a plain file without holding it: a rewrite is seen,
// a removal is Vanished.
func TestFileByPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "children")
	if err := os.WriteFile(path, []byte("12 7 "), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(path, false)
	if err != nil || f.Held() {
		t.Fatalf("OpenFile: %v, held %v", err, f.Held())
	}
	long := strings.Repeat("123456 ", 100)
	if err := os.WriteFile(path, []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	got, err := f.ReadChildren(&buf, nil)
	if err != nil || len(got) != 100 || got[99] != 123456 || len(buf) < len(long) {
		t.Errorf("ReadChildren of a long list: %d PIDs, %v, buffer grown to %d", len(got), err, len(buf))
	}
	if _, err := f.Read(make([]byte, 8)); !errors.Is(err, ErrFormat) {
		t.Errorf("text longer than the buffer: %v", err)
	}
	os.Remove(path)
	if _, err := f.Read(buf); !Vanished(err) {
		t.Errorf("removed file: %v, want it vanished", err)
	}
	if _, err := OpenFile(path, true); !Vanished(err) {
		t.Errorf("OpenFile of a missing file: %v", err)
	}
}

func TestParseChildren(t *testing.T) {
	for in, want := range map[string][]int{"": nil, "5 ": {5}, "5 17 3 ": {5, 17, 3}, "9\n": {9}, "1 2": {1, 2}} {
		got, err := ParseChildren([]byte(in), nil)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseChildren(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"x ", "-3 ", "0 ", "1 2x ", "99999999999999999999 "} {
		if got, err := ParseChildren([]byte(bad), nil); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseChildren(%q) = %v, %v; want an ErrFormat error", bad, got, err)
		}
	}
}

// TestParsePssAgrees checks ParsePss against ParseSmapsRollup on the
// fixtures and on this process's own smaps_rollup.
func TestParsePssAgrees(t *testing.T) {
	files, _ := filepath.Glob("testdata/*/proc/*/smaps_rollup")
	more, _ := filepath.Glob("testdata/proc/*/smaps_rollup")
	files = append(files, more...)
	if _, err := os.Stat("/proc/self/smaps_rollup"); err == nil {
		files = append(files, "/proc/self/smaps_rollup")
	}
	if len(files) < 2 {
		t.Fatalf("no smaps_rollup files: %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ParseSmapsRollup(b)
		got, err2 := ParsePss(b)
		if err != nil || err2 != nil || got != want.Pss {
			t.Errorf("%s: ParsePss %d, %v; ParseSmapsRollup %d, %v", f, got, err2, want.Pss, err)
		}
	}
	for _, bad := range []string{"", "Rss: 4 kB\n", "Pss: x kB\n", "Pss: -4 kB\n", "Pss: 4 MB\n", "Pss:\n", "Pss: 99999999999999999999 kB\n"} {
		_, err := ParsePss([]byte(bad))
		_, err2 := ParseSmapsRollup([]byte(bad))
		if !errors.Is(err, ErrFormat) || !errors.Is(err2, ErrFormat) {
			t.Errorf("%q: ParsePss %v, ParseSmapsRollup %v; want ErrFormat errors from both", bad, err, err2)
		}
	}
}
