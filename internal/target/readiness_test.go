package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestNotReadyNamesPortAndWhereItListened: a server that ignores $PORT and
// listens elsewhere. The error names the port benchrig waited for, the
// address the target really listens on (from /proc), and quotes the log
// line where it says so (issue 14's habit).
func TestNotReadyNamesPortAndWhereItListened(t *testing.T) {
	bin := stallServer(t)
	want, real := freePort(t), freePort(t)
	for real == want {
		real = freePort(t)
	}
	realAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(real))
	spec := testSpec(t, "deaf", bin, "-addr", realAddr)
	spec.Env = []string{"PORT=" + strconv.Itoa(want)}
	spec.StartTimeout = 3 * time.Second // time for the server to start on a loaded machine
	spec.Ready = ProbeSpec{HTTP: fmt.Sprintf("http://127.0.0.1:%d/", want)}
	_, err := Start(context.Background(), spec, nil)
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("Start = %v, want a StartError", err)
	}
	mustContain(t, err.Error(),
		fmt.Sprintf("not ready after 3s waiting for port %d", want),
		"the target listens on "+realAddr+" instead",
		`its log says: "listening on `+realAddr)
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("not one line: %q", err)
	}
	t.Log(err)
}

func TestListenHints(t *testing.T) {
	log := filepath.Join(t.TempDir(), "x.log")
	lines := []string{
		"starting up", "loaded 12 routes", "Server running at http://user:hunter2@localhost:8081/",
		"GET / 200", "bound port 9000", "listening on [::]:7000", "Listening on unix:/tmp/s.sock", "ready",
	}
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := listenHints(log)
	want := []string{"bound port 9000", "listening on [::]:7000", "Listening on unix:/tmp/s.sock"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("hints %q, want the last %d matching lines %q", got, hintLines, want)
	}
	if err := os.WriteFile(log, []byte(lines[2]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := listenHints(log); len(got) != 1 || strings.Contains(got[0], "hunter2") {
		t.Errorf("hints %q: want the line, password redacted", got)
	}
	if (HTTPProbe{URL: "https://h/"}).Port() != 443 || (HTTPProbe{URL: "http://h/"}).Port() != 80 || (TCPProbe{Addr: "h:5"}).Port() != 5 {
		t.Error("probe ports")
	}
}
