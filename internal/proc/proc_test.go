package proc

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// fixture is the checked-in fake /proc: init (1); 4242 the root with a
// weird name, two threads and sockets; 4250 its zombie child; 4251 a worker;
// 4252 a daemon under 4251 in its own group; 4253 a dying (X) process.
func fixture(t *testing.T) FS {
	t.Helper()
	fs, err := NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestNewFS(t *testing.T) {
	if _, err := NewFS(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("NewFS of a missing directory: no error")
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFS(file); err == nil {
		t.Error("NewFS of a file: no error")
	}
	if fs, err := NewFS(""); err != nil || fs.Root() != DefaultRoot {
		t.Errorf("NewFS(\"\") = %q, %v", fs.Root(), err)
	}
	if (FS{}).Root() != DefaultRoot {
		t.Errorf("zero FS reads %q", (FS{}).Root())
	}
}

func TestStatFixture(t *testing.T) {
	fs := fixture(t)
	st, err := fs.Stat(4242)
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{PID: 4242, Comm: "we(ird) na) me", State: 'S', PPID: 1, PGRP: 4242, Session: 4242,
		UTime: 11, STime: 12, CUTime: 13, CSTime: 14, NumThreads: 2, StartTime: 99, RSSPages: 55}
	if st != want {
		t.Fatalf("Stat(4242) = %+v\nwant %+v", st, want)
	}
	if got := st.CPUTime(); got != 0.23 {
		t.Errorf("CPUTime = %v, want 0.23 s", got)
	}
	if u, s := st.TreeCPUTicks(); u != 24 || s != 26 {
		t.Errorf("TreeCPUTicks = %d, %d", u, s)
	}
	if st.ResidentMemory() != 55*uint64(os.Getpagesize()) {
		t.Errorf("ResidentMemory = %d", st.ResidentMemory())
	}
	fast, err := fs.ReadStat(4242, make([]byte, 4096))
	want.Comm = ""
	if err != nil || fast != want {
		t.Errorf("ReadStat = %+v, %v; want %+v", fast, err, want)
	}
	if _, err := fs.ReadStat(4242, make([]byte, 64)); !errors.Is(err, ErrFormat) {
		t.Errorf("ReadStat with a short buffer: %v, want ErrFormat", err)
	}
}

// TestExited checks the one definition: missing, Z, X and x are exited;
// everything else is alive.
func TestExited(t *testing.T) {
	fs := fixture(t)
	for _, tc := range []struct {
		pid    int
		exited bool
	}{{4242, false}, {4251, false}, {4252, false}, {4250, true}, {4253, true}, {9999, true}} {
		if got := fs.Exited(tc.pid); got != tc.exited {
			t.Errorf("Exited(%d) = %v, want %v", tc.pid, got, tc.exited)
		}
		if got := fs.Alive(tc.pid); got == tc.exited {
			t.Errorf("Alive(%d) = %v", tc.pid, got)
		}
	}
	for state, exited := range map[byte]bool{'R': false, 'S': false, 'D': false, 'T': false, 'I': false, 'Z': true, 'X': true, 'x': true} {
		if (Stat{State: state}).Exited() != exited {
			t.Errorf("state %c: Exited %v", state, !exited)
		}
	}
	if fs.Alive(0) || fs.Alive(-1) {
		t.Error("pid ≤ 0 alive")
	}
	if !fs.SameProcess(4242, 99) || fs.SameProcess(4242, 100) || fs.SameProcess(4250, 120) {
		t.Error("SameProcess: wrong judgement of start time or zombie")
	}
	_, err := fs.Stat(9999)
	if !Vanished(err) {
		t.Errorf("Stat of a missing PID: %v, want a Vanished error", err)
	}
}

func TestParseStatErrors(t *testing.T) {
	for _, line := range []string{
		"", "4242", "4242 (x", "x) S 1", "4242 (x) SS 1 1 1 0 -1 0 0 0 0 0 1 1 1 1 20 0 1 0 1 1 1",
		"4242 (x) S 1 1", "4242 (x) S 1 1 1 0 -1 0 0 0 0 0 one 1 1 1 20 0 1 0 1 1 1",
		"(x) S 1 1 1 0 -1 0 0 0 0 0 1 1 1 1 20 0 1 0 1 1 1",
	} {
		if st, err := ParseStat([]byte(line)); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseStat(%q) = %+v, %v; want ErrFormat", line, st, err)
		}
	}
	neg := "7 (x) S 1 1 1 0 -1 0 0 0 0 0 1 1 -5 1 20 0 1 0 1 1 -3"
	if st, err := ParseStat([]byte(neg)); err != nil || st.CUTime != 0 || st.RSSPages != 0 {
		t.Errorf("negative counters: %+v, %v; want 0", st, err)
	}
}

func TestTable(t *testing.T) {
	fs := fixture(t)
	tab, err := fs.Table()
	if err != nil {
		t.Fatal(err)
	}
	if len(tab) != 6 {
		t.Errorf("Table holds %d processes, want 6", len(tab))
	}
	if got, want := tab.Children(4242), []int{4251}; !reflect.DeepEqual(got, want) {
		t.Errorf("Children(4242) = %v, want %v (the zombie 4250 left out)", got, want)
	}
	if got, want := tab.Descendants(4242), []int{4251, 4252}; !reflect.DeepEqual(got, want) {
		t.Errorf("Descendants(4242) = %v, want %v (the daemon in its own group included)", got, want)
	}
	if got, want := tab.Descendants(1), []int{4242, 4251, 4252}; !reflect.DeepEqual(got, want) {
		t.Errorf("Descendants(1) = %v, want %v", got, want)
	}
	if got, want := tab.Group(4242), []int{4242, 4251}; !reflect.DeepEqual(got, want) {
		t.Errorf("Group(4242) = %v, want %v", got, want)
	}
	if got, err := fs.Descendants(4251); err != nil || !reflect.DeepEqual(got, []int{4252}) {
		t.Errorf("FS.Descendants(4251) = %v, %v", got, err)
	}
	if got, err := fs.Threads(4242); err != nil || !reflect.DeepEqual(got, []int{4242, 4243}) {
		t.Errorf("Threads(4242) = %v, %v", got, err)
	}
	cycle := Table{5: {PID: 5, PPID: 6, State: 'S'}, 6: {PID: 6, PPID: 5, State: 'S'}}
	if got := cycle.Descendants(5); !reflect.DeepEqual(got, []int{6}) {
		t.Errorf("PPID cycle: Descendants = %v", got)
	}
}

func TestStatusSmapsSchedstatCmdline(t *testing.T) {
	fs := fixture(t)
	st, err := fs.Status(4242)
	if err != nil {
		t.Fatal(err)
	}
	want := Status{Name: "we(ird) na) me", State: 'S', TGID: 4242, PID: 4242, PPID: 1, UID: [4]int{1000, 1000, 1000, 1000},
		Threads: 2, VmRSS: 220 << 10, VmHWM: 300 << 10}
	if st != want || st.ResidentMemory() != 220<<10 || st.Exited() {
		t.Errorf("Status = %+v\nwant %+v", st, want)
	}
	if _, err := ParseStatus([]byte("State:\tS\nVmRSS:\tmany kB\n")); !errors.Is(err, ErrFormat) {
		t.Errorf("bad VmRSS: %v", err)
	}
	sm, err := fs.SmapsRollup(4242)
	if err != nil {
		t.Fatal(err)
	}
	if sm.Rss != 1788<<10 || sm.Pss != 289<<10 || sm.PssAnon != 116<<10 || sm.PssFile != 173<<10 || sm.SharedClean != 1628<<10 || sm.PrivateDirty != 116<<10 {
		t.Errorf("SmapsRollup = %+v", sm)
	}
	for _, bad := range []string{"", "Rss: 1 kB\n", "Pss: x kB\n", "Pss: 1 MB\n"} {
		if _, err := ParseSmapsRollup([]byte(bad)); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseSmapsRollup(%q): %v, want ErrFormat", bad, err)
		}
	}
	buf := make([]byte, 256)
	if ns, err := fs.ReadSchedstat(4242, buf); err != nil || ns != 123456 {
		t.Errorf("ReadSchedstat = %d, %v", ns, err)
	}
	if ns, err := fs.ReadThreadSchedstat(4242, 4243, buf); err != nil || ns.Duration() != 23456 {
		t.Errorf("ReadThreadSchedstat = %d, %v", ns, err)
	}
	for _, bad := range []string{"", "-1 2 3", "x 1 2", "12"} {
		if _, err := ParseSchedstat([]byte(bad)); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseSchedstat(%q): %v", bad, err)
		}
	}
	if args, err := fs.Cmdline(4242); err != nil || !reflect.DeepEqual(args, []string{"sleep", "300.5"}) {
		t.Errorf("Cmdline = %q, %v", args, err)
	}
}

func TestNet(t *testing.T) {
	fs := fixture(t)
	ls, err := fs.TCPListeners()
	if err != nil {
		t.Fatal(err)
	}
	want := []Listener{
		{netip.MustParseAddrPort("0.0.0.0:2024"), 1061},
		{netip.MustParseAddrPort("[::1]:3306"), 77777},
		{netip.MustParseAddrPort("[::]:8080"), 99999},
		{netip.MustParseAddrPort("127.0.0.1:16399"), 73905},
	}
	if !reflect.DeepEqual(ls, want) {
		t.Errorf("TCPListeners =\n%v\nwant\n%v", ls, want)
	}
	of, err := fs.ListenersOf([]int{4242, 4251, 9999})
	if err != nil || len(of) != 2 || of[0].Port() != 8080 || of[1].Port() != 16399 {
		t.Errorf("ListenersOf = %v, %v; want 8080 and 16399", of, err)
	}
	if pid, err := fs.ListenerPID(16399); err != nil || pid != 4242 {
		t.Errorf("ListenerPID(16399) = %d, %v", pid, err)
	}
	if _, err := fs.ListenerPID(2024); err == nil {
		t.Error("ListenerPID of a socket nobody visible holds: no error")
	}
	if _, err := fs.ListenerPID(5); err == nil {
		t.Error("ListenerPID of a free port: no error")
	}
	if _, err := fs.ListenerPID(70000); err == nil {
		t.Error("ListenerPID(70000): no error")
	}
	if _, err := ParseNetTCP([]byte("h\n 0: 0100007G:400F 0 0A 0 0 0 0 0 5\n")); !errors.Is(err, ErrFormat) {
		t.Errorf("bad address: %v", err)
	}
}

func TestLocks(t *testing.T) {
	fs := fixture(t)
	ls, err := fs.Locks()
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 3 || ls[0] != (FileLock{Kind: "FLOCK", Write: true, PID: 4242, Major: 0, Minor: 0x2a, Inode: 1311}) ||
		ls[2].Major != 0xfd || ls[2].PID != -1 {
		t.Errorf("Locks = %+v", ls)
	}
	if got, err := fs.LockHolders(0, 0x2a, 1311); err != nil || !reflect.DeepEqual(got, []int{4242}) {
		t.Errorf("LockHolders = %v, %v (the waiter must not count)", got, err)
	}
}

// FuzzParseStat checks that ParseStat never panics and that what it
// accepts has a one-letter state and the PID it starts with.
func FuzzParseStat(f *testing.F) {
	for _, s := range []string{
		"4242 (we(ird) na) me) S 1 4242 4242 0 -1 4194560 100 0 0 0 11 12 13 14 20 0 2 0 99 1000000 55 1",
		"1 (x) Z 0 1 1 0 -1 0 0 0 0 0 1 1 1 1 20 0 1 0 1 1 1\n", "", "()", "1 ()) ",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := ParseStat(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		if st.State == 0 || st.PID < 0 {
			t.Fatalf("accepted %q as %+v", b, st)
		}
	})
}
