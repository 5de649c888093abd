//go:build linux

package proc

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// TestRealProcess reads a real child process (a sleep), this test process
// and its listening socket and file lock from the machine's /proc, and
// checks the stat parser against procfs on the same file.
func TestRealProcess(t *testing.T) {
	fs, err := NewFS(DefaultRoot)
	if err != nil {
		t.Fatalf("no /proc: %v", err)
	}
	self := os.Getpid()

	cmd := exec.Command("sleep", "300.271828")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	st, err := fs.Stat(pid)
	if err != nil {
		t.Fatal(err)
	}
	if st.PID != pid || st.PPID != self || st.PGRP != pid || st.Exited() || st.Comm != "sleep" {
		t.Errorf("Stat(sleep) = %+v; want pid %d, parent %d, its own group, alive", st, pid, self)
	}
	// The parent learns of the exec at its point of no return, before the
	// kernel has set up the new arguments: cmdline can read empty at first.
	var args []string
	for i := 0; i < 1000 && len(args) == 0; i++ {
		args, err = fs.Cmdline(pid)
		time.Sleep(time.Millisecond)
	}
	if err != nil || !reflect.DeepEqual(args, []string{"sleep", "300.271828"}) {
		t.Errorf("Cmdline = %q, %v", args, err)
	}
	if ds, err := fs.Descendants(self); err != nil || !slices.Contains(ds, pid) {
		t.Errorf("Descendants(self) = %v, %v; want %d in it", ds, err, pid)
	}
	if g, err := fs.Group(pid); err != nil || !reflect.DeepEqual(g, []int{pid}) {
		t.Errorf("Group(%d) = %v, %v", pid, g, err)
	}
	if !fs.Alive(pid) || !fs.SameProcess(pid, st.StartTime) {
		t.Error("a running sleep is not alive")
	}

	// Killed but not reaped: a zombie, which counts as exited.
	_ = cmd.Process.Signal(syscall.SIGKILL)
	var ws syscall.WaitStatus
	// Wait for the state change without reaping (WNOWAIT).
	var info [128]byte
	_, _, e := syscall.Syscall6(syscall.SYS_WAITID, 1 /* P_PID */, uintptr(pid), uintptr(unsafePointer(&info)), syscall.WEXITED|0x01000000 /* WNOWAIT */, 0, 0)
	if e != 0 {
		t.Fatalf("waitid: %v", e)
	}
	if zs, err := fs.Stat(pid); err != nil || zs.State != 'Z' || !fs.Exited(pid) {
		t.Errorf("killed, unreaped sleep: %+v, %v; Exited %v; want a zombie that counts as exited", zs, err, fs.Exited(pid))
	}
	_, _ = syscall.Wait4(pid, &ws, 0, nil)
	if !fs.Exited(pid) || fs.Alive(pid) {
		t.Error("a reaped process is still alive")
	}

	// This process: stat against procfs, status, smaps_rollup, threads.
	mine, err := fs.Stat(self)
	if err != nil {
		t.Fatal(err)
	}
	pfs, _ := procfs.NewFS(DefaultRoot)
	pp, _ := pfs.Proc(self)
	ref, err := pp.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if mine.PPID != ref.PPID || mine.StartTime != ref.Starttime || mine.PGRP != ref.PGRP || mine.Comm != ref.Comm {
		t.Errorf("Stat(self) %+v disagrees with procfs %+v", mine, ref)
	}
	if s, err := fs.Status(self); err != nil || s.PID != self || s.VmRSS == 0 || s.Threads < 1 {
		t.Errorf("Status(self) = %+v, %v", s, err)
	}
	if sm, err := fs.SmapsRollup(self); err != nil || sm.Pss == 0 || sm.Rss < sm.Pss {
		t.Errorf("SmapsRollup(self) = %+v, %v", sm, err)
	}
	if tids, err := fs.Threads(self); err != nil || !slices.Contains(tids, self) {
		t.Errorf("Threads(self) = %v, %v", tids, err)
	}
	if ns, err := fs.ReadSchedstat(self, make([]byte, 256)); err != nil || ns == 0 {
		t.Errorf("ReadSchedstat(self) = %d, %v", ns, err)
	}

	// A listening socket of this process.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if got, err := fs.ListenerPID(port); err != nil || got != self {
		t.Errorf("ListenerPID(%d) = %d, %v; want this process %d", port, got, err, self)
	}
	if ls, err := fs.ListenersOf([]int{self}); err != nil || !slices.ContainsFunc(ls, func(l Listener) bool { return l.Port() == port }) {
		t.Errorf("ListenersOf(self) = %v, %v; want port %d", ls, err, port)
	}

	// A flock held by this process.
	f, err := os.Create(filepath.Join(t.TempDir(), "lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	var fst syscall.Stat_t
	_ = syscall.Fstat(int(f.Fd()), &fst)
	holders, err := fs.LockHolders(uint32(fst.Dev>>8&0xfff|fst.Dev>>32&^0xfff), uint32(fst.Dev&0xff|fst.Dev>>12&^0xff), fst.Ino)
	if err != nil || !reflect.DeepEqual(holders, []int{self}) {
		t.Errorf("LockHolders = %v, %v; want [%d]", holders, err, self)
	}
}

// TestPinning pins a thread to one allowed CPU, checks the kernel reports
// it, and checks the errors for unusable CPUs.
func TestPinning(t *testing.T) {
	mine, err := Affinity(0)
	if err != nil || len(mine) == 0 {
		t.Fatalf("Affinity(0) = %v, %v", mine, err)
	}
	one := []int{mine[len(mine)-1]}
	var inside []int
	err = OnPinnedThread(one, func() error {
		var err error
		inside, err = Affinity(0)
		return err
	})
	if err != nil || !reflect.DeepEqual(inside, one) {
		t.Errorf("on the pinned thread: affinity %v, %v; want %v", inside, err, one)
	}
	if err := CheckAllowed(mine); err != nil {
		t.Errorf("CheckAllowed(own CPUs %v): %v", mine, err)
	}
	err = CheckAllowed([]int{MaxCPU - 1})
	if err == nil || !strings.Contains(err.Error(), "benchrig may run on CPUs "+FormatCPUList(mine)) {
		t.Errorf("CheckAllowed(absent CPU): %v; want the usable CPUs named", err)
	}
	err = OnPinnedThread([]int{MaxCPU - 1}, func() error { t.Error("fn ran on a thread that could not be pinned"); return nil })
	var pe *PinError
	if err == nil || !asPinError(err, &pe) || !strings.Contains(err.Error(), "online CPUs") {
		t.Errorf("pin to an absent CPU: %v; want a *PinError naming the online CPUs", err)
	}
	fs := Default()
	restore, err := fs.PinSelf(mine)
	if err != nil {
		t.Fatalf("PinSelf(own CPUs): %v", err)
	}
	if err := restore(); err != nil {
		t.Errorf("restore: %v", err)
	}
}
