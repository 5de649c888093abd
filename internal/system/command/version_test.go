package command

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// script writes an executable shell script into a temp dir.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "runtime")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestVersion: the first non-empty line of what the program prints for
// --version (stdout, else stderr), cleaned and bounded; version_command
// replaces the default; the target's env reaches it.
func TestVersion(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("é", 150) // 300 bytes
	cases := []struct {
		name, body string
		argv       []string
		env        []string
		want       string
	}{
		{"node", `[ "$1" = --version ] && echo v24.22.3`, nil, nil, "v24.22.3"},
		{"leading blank lines", `printf '\n\n  Python 3.11.2  \nmore\n'`, nil, nil, "Python 3.11.2"},
		{"stderr only", `echo "java 21.0.1" >&2`, nil, nil, "java 21.0.1"},
		{"control characters dropped", `printf 'v1\033[0m.2\r\n'`, nil, nil, "v1[0m.2"},
		{"cut at 200 bytes on a rune boundary", `echo ` + long, nil, nil, strings.Repeat("é", 100)},
		{"version_command", `[ "$1" = -V ] && echo "custom $2"`, []string{"", "-V", "x"}, nil, "custom x"},
		{"env", `echo "$RUNTIME_FLAVOUR"`, nil, []string{"RUNTIME_FLAVOUR=lts"}, "lts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := script(t, c.body)
			argv := c.argv
			if argv != nil {
				argv[0] = bin
			}
			got, err := Version(ctx, bin, argv, "", c.env, VersionTimeout)
			if err != nil || got != c.want {
				t.Errorf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestVersionFails: a program that exits non-zero, prints nothing, does
// not exist or never answers gives an error naming the command; the one
// that never answers is killed with what it started.
func TestVersionFails(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ name, body, want string }{
		{"exit 2", `echo "flag provided but not defined: -version" >&2; exit 2`, "exit status 2"},
		{"silent", `exit 0`, "printed nothing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := script(t, c.body)
			_, err := Version(ctx, bin, nil, "", nil, VersionTimeout)
			if err == nil || !strings.Contains(err.Error(), bin+" --version") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v; want an error naming %s --version: %s", err, bin, c.want)
			}
		})
	}
	if _, err := Version(ctx, filepath.Join(t.TempDir(), "none"), nil, "", nil, VersionTimeout); err == nil {
		t.Error("a missing program gave a version")
	}
	if _, err := Version(ctx, "", nil, "", nil, VersionTimeout); err == nil {
		t.Error("no program gave a version")
	}

	// A server that ignores --version and serves: killed at the timeout,
	// its child too.
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	bin := script(t, `sleep 300 & echo $! > `+pidFile+`; wait`)
	_, err := Version(ctx, bin, nil, "", nil, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Fatalf("got %v; want no answer within 300ms", err)
	}
	b, _ := os.ReadFile(pidFile)
	var pid int
	for _, ch := range strings.TrimSpace(string(b)) {
		pid = pid*10 + int(ch-'0')
	}
	if pid == 0 {
		t.Fatal("the script did not record its child")
	}
	// The kill is delivered before Version returns; reaping may lag.
	for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
		if st, _ := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/stat"); strings.Contains(string(st), ") Z ") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st, err := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the child %d of a program that timed out still runs: %s", pid, st)
	}
}
