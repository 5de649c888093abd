package target

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// statLine builds a /proc/PID/stat line with the fields this package reads.
func statLine(pid int, comm string, state byte, ppid, pgrp int, start uint64) string {
	return fmt.Sprintf("%d (%s) %c %d %d %d 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 %d 1000000 200 18446744073709551615\n",
		pid, comm, state, ppid, pgrp, pgrp, start)
}

// fakeProc is a fixture process filesystem.
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T) *fakeProc { return &fakeProc{t: t, root: t.TempDir()} }

func (f *fakeProc) write(rel, content string) {
	f.t.Helper()
	path := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeProc) proc(pid int, comm string, state byte, ppid, pgrp int) {
	f.write(fmt.Sprintf("%d/stat", pid), statLine(pid, comm, state, ppid, pgrp, uint64(1000+pid)))
}

func (f *fakeProc) fd(pid, fd int, target string) {
	f.t.Helper()
	dir := filepath.Join(f.root, fmt.Sprint(pid), "fd")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, fmt.Sprint(fd))); err != nil {
		f.t.Fatal(err)
	}
}

func TestParseStat(t *testing.T) {
	st, err := parseStat(42, []byte(statLine(42, "we(ird) name)", 'S', 7, 40, 123456)))
	if err != nil {
		t.Fatal(err)
	}
	want := procStat{PID: 42, Comm: "we(ird) name)", State: 'S', PPID: 7, PGRP: 40, StartTime: 123456}
	if st != want {
		t.Errorf("got %+v, want %+v", st, want)
	}
	for _, bad := range []string{"", "42 noparens S 1 2", "42 (x) S 1", "42 (x) S a 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", "42 (x) SS 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"} {
		if _, err := parseStat(42, []byte(bad)); err == nil {
			t.Errorf("parseStat(%q): no error", bad)
		} else if !strings.Contains(err.Error(), "/proc/42/stat") {
			t.Errorf("error %q does not name the file", err)
		}
	}
}

func TestGroupMembersFixture(t *testing.T) {
	f := newFakeProc(t)
	f.proc(100, "server", 'S', 1, 100)
	f.proc(101, "worker", 'R', 100, 100)
	f.proc(102, "zombie", 'Z', 100, 100)
	f.proc(103, "daemon", 'S', 1, 103) // left the group
	f.proc(200, "other", 'S', 1, 200)
	f.write("self/stat", "ignored")
	f.write("200/garbage", "")
	f.write("300/stat", "truncated (")
	got, err := groupMembers(f.root, 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{100, 101}; !reflect.DeepEqual(got, want) {
		t.Errorf("groupMembers = %v, want %v", got, want)
	}
	if got, _ := groupMembers(f.root, 999); len(got) != 0 {
		t.Errorf("empty group: %v", got)
	}
	if _, err := groupMembers(filepath.Join(f.root, "missing"), 1); err == nil {
		t.Error("no error for a missing /proc")
	}
}

func TestAttachFixture(t *testing.T) {
	f := newFakeProc(t)
	f.proc(10, "postgres", 'S', 1, 10)
	f.proc(11, "defunct", 'Z', 1, 11)
	a, err := attach(f.root, 10)
	if err != nil {
		t.Fatal(err)
	}
	if a.PID() != 10 || a.Comm() != "postgres" || a.start != 1010 {
		t.Errorf("attached %+v", a)
	}
	for pid, want := range map[int]string{
		0:  "want a positive process ID",
		-3: "want a positive process ID",
		12: "attach to pid 12: no such process",
		11: "attach to pid 11 (defunct): process has exited",
	} {
		_, err := attach(f.root, pid)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("attach(%d) = %v, want %q", pid, err, want)
		}
	}
}
