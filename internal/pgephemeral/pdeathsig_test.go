package pgephemeral

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/proc"
)

// helperEnv makes the test binary, run as a child, start a server in the
// named directory, print its PID and wait to be killed.
const helperEnv = "BENCHRIG_PG_HELPER_DIR"

func TestHelperServer(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("helper process for TestDeathOfBenchrigKillsServer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := StartEphemeral(ctx, Options{TempDir: dir, MaxConnections: 10})
	if err != nil {
		fmt.Println("ERR", err)
		return
	}
	fmt.Println("PID", s.PID())
	<-ctx.Done() // killed long before; bounded all the same
	s.Stop(context.Background())
}

// TestDeathOfBenchrigKillsServer kills (SIGKILL, no cleanup possible) a
// process that started a server and checks that Pdeathsig takes the
// postmaster, and with it its children, down.
func TestDeathOfBenchrigKillsServer(t *testing.T) {
	needServer(t)
	dir := sharedTempDir(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServer$", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "PID ") || strings.HasPrefix(l, "ERR ") {
				lines <- l
				break
			}
		}
		close(lines)
		for sc.Scan() {
		}
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(60 * time.Second):
		t.Fatal("helper did not start a server within 60s")
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "PID "))
	if err != nil {
		t.Fatalf("helper: %q", line)
	}
	kids := descendants(proc.Default(), pid)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if left := waitGone(proc.Default(), append([]int{pid}, kids...), 15*time.Second); len(left) > 0 {
		killAll(pid, left) // do not leave them behind for the next test
		t.Fatalf("server processes %v outlived the process that started them", left)
	}
}
