package pgephemeral

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/proc"
)

func TestEphemeralServer(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	for k, want := range map[string]string{
		"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off", "jit": "off",
		"autovacuum": "off", "listen_addresses": "127.0.0.1", "max_connections": "20",
		"shared_buffers": DefaultSharedBuffers, "port": strconv.Itoa(s.Port()),
	} {
		if got := s.Settings()[k]; got != want {
			t.Errorf("Settings()[%s] = %q, want %q", k, got, want)
		}
	}
	if strings.Contains(s.DSN(), ":@") || strings.Contains(s.DSN(), "password") {
		t.Errorf("DSN() %q carries a password", s.DSN())
	}
	conn, err := pgclient.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var version, fsync string
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version'), current_setting('fsync')").Scan(&version, &fsync); err != nil {
		t.Fatal(err)
	}
	if version != s.Version() || version == "" {
		t.Errorf("Version() = %q, server says %q", s.Version(), version)
	}
	if !strings.HasPrefix(version, strconv.Itoa(s.Binaries().Major)+".") {
		t.Errorf("Version() %q does not match binaries' major %d", version, s.Binaries().Major)
	}
	if fsync != "off" {
		t.Errorf("fsync = %q on the server", fsync)
	}
	pid := s.PID()
	if !alive(proc.Default(), pid) {
		t.Fatalf("PID() %d is not a live process", pid)
	}
	if fi, err := os.Stat(filepath.Join(s.DataDir(), "PG_VERSION")); err != nil || fi.IsDir() {
		t.Errorf("DataDir() %s has no PG_VERSION: %v", s.DataDir(), err)
	}
	if os.Geteuid() == 0 {
		if uid := procUID(t, pid); uid == "0" {
			t.Errorf("postmaster runs as root")
		}
	}
	var listen string
	if err := conn.QueryRow(ctx, "SELECT inet_server_addr()::text").Scan(&listen); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(listen, "127.0.0.1") {
		t.Errorf("server address %q, want loopback", listen)
	}
}

// procUID returns the real uid of a process.
func procUID(t *testing.T, pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			return f[1]
		}
	}
	t.Fatalf("no Uid line for %d", pid)
	return ""
}

// processesIn lists live processes whose command line mentions dir.
func processesIn(dir string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), dir) && alive(proc.Default(), pid) {
			out = append(out, pid)
		}
	}
	return out
}

// sharedTempDir is a directory the server's user can reach, removed after
// the test.
func sharedTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "benchrig-pgtest-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestStopRemovesEverything(t *testing.T) {
	needServer(t)
	ctx := testCtx(t)
	s, err := StartEphemeral(ctx, Options{TempDir: sharedTempDir(t), MaxConnections: 10})
	if err != nil {
		t.Fatal(err)
	}
	// Open a few backends so that Stop has children to end.
	for i := 0; i < 3; i++ {
		c, err := pgclient.Connect(ctx, s.DSN())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(context.Background())
	}
	pids := append([]int{s.PID()}, descendants(proc.Default(), s.PID())...)
	if len(pids) < 4 {
		t.Fatalf("postmaster %d has %d children, want at least 3 backends", s.PID(), len(pids)-1)
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.Stop(context.Background()) }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Errorf("Stop: %v", err)
		}
	}
	if _, err := os.Stat(s.Dir()); !os.IsNotExist(err) {
		t.Errorf("server directory %s still there: %v", s.Dir(), err)
	}
	for _, p := range pids {
		if alive(proc.Default(), p) {
			t.Errorf("server process %d still alive after Stop", p)
		}
	}
	if left := processesIn(s.Dir()); len(left) > 0 {
		t.Errorf("processes %v still mention %s", left, s.Dir())
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestStopWithDoneContextKills(t *testing.T) {
	needServer(t)
	s, err := StartEphemeral(testCtx(t), Options{TempDir: sharedTempDir(t), MaxConnections: 10, StopGrace: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := s.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if alive(proc.Default(), pid) {
		t.Errorf("postmaster %d alive after Stop", pid)
	}
	// A minute's grace would have been waited out had the done context
	// not hurried Stop to SIGKILL.
	if time.Since(start) > 50*time.Second {
		t.Errorf("Stop with a done context waited out the grace period")
	}
}

func TestStartCancelCleansUp(t *testing.T) {
	needServer(t)
	for _, delay := range []time.Duration{0, 200 * time.Millisecond, 800 * time.Millisecond, 1500 * time.Millisecond, 2500 * time.Millisecond} {
		dir := sharedTempDir(t)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(delay, cancel)
		s, err := StartEphemeral(ctx, Options{TempDir: dir, MaxConnections: 10})
		cancel()
		if err == nil {
			// The start won the race: Stop must clean up just as well.
			if err := s.Stop(context.Background()); err != nil {
				t.Errorf("delay %v: Stop: %v", delay, err)
			}
		} else if !strings.Contains(err.Error(), "context canceled") {
			t.Errorf("delay %v: error %q does not say the start was canceled", delay, err)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 0 {
			t.Errorf("delay %v: %d entries left in %s", delay, len(ents), dir)
		}
		if left := processesIn(dir); len(left) > 0 {
			t.Errorf("delay %v: processes %v left running", delay, left)
		}
	}
}

func TestOptionsErrors(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{MaxConnections: 2}, "max_connections 2: must be between 5 and 100000"},
		{Options{Port: 70000}, "port 70000"},
		{Options{Settings: map[string]string{"bad name": "1"}}, `setting "bad name"`},
		{Options{Settings: map[string]string{"work_mem": "1\n2"}}, "setting work_mem: value must be a single line"},
		{Options{Superuser: "Robert'); DROP"}, "superuser"},
		{Options{Bin: "/nonexistent"}, `bin "/nonexistent"`},
	} {
		_, err := StartEphemeral(context.Background(), tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("StartEphemeral(%+v) = %v, want an error containing %q", tc.opts, err, tc.want)
		}
	}
}
