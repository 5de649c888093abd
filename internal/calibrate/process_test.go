package calibrate_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/calibrate"
	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/proc"
	httpdriver "github.com/benchrig/benchrig/internal/protocol/http/driver"
	"github.com/benchrig/benchrig/internal/result"
)

// A protocol whose null peer refuses every request: registered in this
// binary's init, as protocols are, so its null peer's process (this
// binary re-executed) serves it too.
func init() {
	calibrate.Register("test-refusing", calibrate.NullPeer{
		New: func() calibrate.Responder { return refusing{} },
		Driver: func(addr string) (driver.Driver, error) {
			return httpdriver.New(httpdriver.Config{URL: "http://" + addr + "/", Method: "GET", Timeout: 2 * time.Second, DialTimeout: 2 * time.Second})
		},
	})
}

type refusing struct{}

func (refusing) Respond([]byte) ([]byte, int, error) {
	return nil, 0, errors.New("test-refusing: refused by design")
}

// peerChildren lists the null peers whose parent is pid: processes alive
// (or exited and not reaped: a zombie counts) running with the reserved
// argument.
func peerChildren(t *testing.T, pid int) []int {
	t.Helper()
	tab, err := proc.Default().Table()
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for p, st := range tab {
		if st.PPID != pid {
			continue
		}
		args, _ := proc.Default().Cmdline(p)
		if st.Exited() || (len(args) > 1 && args[1] == calibrate.ChildArg) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// noChildLeft fails the test if a process this one started is still there
// (a null peer, or any child at all, reaped or not).
func noChildLeft(t *testing.T) {
	t.Helper()
	tab, err := proc.Default().Table()
	if err != nil {
		t.Fatal(err)
	}
	for p, st := range tab {
		if st.PPID == os.Getpid() {
			args, _ := proc.Default().Cmdline(p)
			t.Errorf("process %d (state %c, %q) is still a child of the test", p, st.State, args)
		}
	}
}

// TestPeerRunsInAProcessOfItsOwn: while Measure drives it, the null peer is
// a child process running this binary with the reserved argument and the
// protocol; once Measure returns it has been reaped, and the entry holds
// the client's and the peer's CPU.
func TestPeerRunsInAProcessOfItsOwn(t *testing.T) {
	done := make(chan *result.Floor, 1)
	go func() {
		done <- calibrate.Measure(context.Background(), []string{"http"}, []int{1, 4}, time.Second)
	}()
	seen := map[int][]string{}
	var f *result.Floor
	for f == nil {
		select {
		case f = <-done:
		case <-time.After(20 * time.Millisecond):
			for _, p := range peerChildren(t, os.Getpid()) {
				if args, err := proc.Default().Cmdline(p); err == nil && len(args) > 0 {
					seen[p] = args
				}
			}
		}
	}
	if len(seen) == 0 {
		t.Fatal("no null peer process seen while Measure ran")
	}
	for p, args := range seen {
		if p == os.Getpid() || len(args) != 6 || args[1] != calibrate.ChildArg || args[2] != "http" || args[3] != strconv.Itoa(os.Getpid()) {
			t.Errorf("process %d runs %q: want this binary with %s http %d", p, args, calibrate.ChildArg, os.Getpid())
		}
	}
	// One process for each level: 1 connection, then 4.
	if len(seen) != 2 {
		t.Errorf("null peer processes %v: want one per level (2)", seen)
	}
	for _, e := range f.Protocols {
		if e.Error != "" || e.Requests == 0 || e.ClientCPUUS <= 0 || e.PeerCPUUS <= 0 {
			t.Errorf("entry %+v: want requests and both CPUs", e)
		}
	}
	noChildLeft(t)
}

// TestPeerApartFromTheClient: with benchrig pinned to one CPU, the null
// peer runs on the other online CPUs, as a server the client measures
// would, and the entry says which.
func TestPeerApartFromTheClient(t *testing.T) {
	online, err := proc.ParseCPUList(proc.OnlineCPUs())
	if err != nil || len(online) < 2 {
		t.Skipf("needs two online CPUs (online: %s)", proc.OnlineCPUs())
	}
	mine, err := proc.Affinity(os.Getpid())
	if err != nil || len(mine) == 0 {
		t.Fatal(err)
	}
	last := mine[len(mine)-1]
	restore, err := proc.Default().PinSelf([]int{last})
	if err != nil {
		t.Skipf("cannot pin the test: %v", err)
	}
	f := calibrate.Measure(context.Background(), []string{"resp"}, nil, 200*time.Millisecond)
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	want := proc.FormatCPUList(slices.DeleteFunc(slices.Clone(online), func(c int) bool { return c == last }))
	if e := f.Entry("resp"); e == nil || e.Error != "" || e.PeerCPUs != want {
		t.Errorf("entry %+v: want the null peer on CPUs %s (the client on %d)", e, want, last)
	}
	noChildLeft(t)
}

// TestPeerErrorReported: a protocol error the null peer's process meets
// ends up in the entry.
func TestPeerErrorReported(t *testing.T) {
	f := calibrate.Measure(context.Background(), []string{"test-refusing"}, nil, 200*time.Millisecond)
	if e := f.Entry("test-refusing"); e == nil || !strings.Contains(e.Error, "test-refusing: refused by design") {
		t.Errorf("entry %+v: want the peer's error", e)
	}
	noChildLeft(t)
}

// TestPeerThatCannotStart: a null peer that exits at once, or never
// listens, is a clear error naming the protocol and what it wrote on
// stderr, within the start bound, and leaves no process behind.
func TestPeerThatCannotStart(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	defer calibrate.SetStartBound(500 * time.Millisecond)()
	for _, tc := range []struct {
		exe  string
		want []string
	}{
		{script("fails", "echo 'no socket for me' >&2; exit 3"),
			[]string{"null peer for http: exited before it listened (exit status 3): no socket for me"}},
		{script("silent", "echo 'waiting forever' >&2; exec sleep 60"),
			[]string{"null peer for http: not listening after 500ms: waiting forever"}},
		{filepath.Join(dir, "absent"),
			[]string{"null peer for http: start " + filepath.Join(dir, "absent") + ": ", "no such file or directory"}},
	} {
		restore := calibrate.SetPeerExe(tc.exe)
		t0 := time.Now()
		f := calibrate.Measure(context.Background(), []string{"http"}, nil, 100*time.Millisecond)
		took := time.Since(t0)
		restore()
		e := f.Entry("http")
		for _, w := range tc.want {
			if e == nil || !strings.Contains(e.Error, w) {
				t.Errorf("%s: entry %+v: want an error with %q", filepath.Base(tc.exe), e, w)
			}
		}
		if took > 10*time.Second {
			t.Errorf("%s: Measure took %s", filepath.Base(tc.exe), took)
		}
		noChildLeft(t)
	}
}

// TestPeerStartedByHand: the reserved argument without the control socket
// or under another parent exits at once with an error, and runs neither
// the binary's main nor its tests.
func TestPeerStartedByHand(t *testing.T) {
	for _, args := range [][]string{
		{calibrate.ChildArg, "http", strconv.Itoa(os.Getpid())}, // no fd 3
		{calibrate.ChildArg, "http", "1"},                       // not its parent
		{calibrate.ChildArg},
	} {
		cmd := exec.Command(os.Args[0], args...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.HasPrefix(string(out), "benchrig null peer: ") || strings.Contains(string(out), "PASS") {
			t.Errorf("%q: %v, output %q: want exit status 2 and one error line", args, err, out)
		}
	}
}

// TestPeerDiesWithItsParent: a process measuring the floor, killed with
// SIGKILL, leaves no null peer behind.
func TestPeerDiesWithItsParent(t *testing.T) {
	if os.Getenv("BENCHRIG_CALIBRATE_HELPER") != "" {
		t.Skip("this is the helper process")
	}
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperMeasureLong$", "-test.count=1")
	helper.Env = append(os.Environ(), "BENCHRIG_CALIBRATE_HELPER=1")
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer helper.Process.Kill()
	var peerPID int
	var peerStart uint64
	for deadline := time.Now().Add(20 * time.Second); peerPID == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if kids := peerChildren(t, helper.Process.Pid); len(kids) > 0 {
			var buf [512]byte
			if st, err := proc.Default().ReadStat(kids[0], buf[:]); err == nil {
				peerPID, peerStart = kids[0], st.StartTime
			}
		}
	}
	if peerPID == 0 {
		t.Fatal("the helper started no null peer within 20 s")
	}
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for proc.Default().SameProcess(peerPID, peerStart) {
		if time.Now().After(deadline) {
			t.Fatalf("null peer %d still alive 5 s after its parent was killed", peerPID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHelperMeasureLong is TestPeerDiesWithItsParent's helper process: it
// measures the floor for a minute, until it is killed.
func TestHelperMeasureLong(t *testing.T) {
	if os.Getenv("BENCHRIG_CALIBRATE_HELPER") == "" {
		t.Skip("run by TestPeerDiesWithItsParent")
	}
	calibrate.Measure(context.Background(), []string{"http"}, nil, calibrate.MaxDuration)
	t.Error("Measure returned: the helper should have been killed first")
}
