package command

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// script writes an executable shell script named name into a temp dir.
func script(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestVersion: a known runtime is asked with its own flag, and the first
// non-empty line of its answer (stdout, else stderr) is kept, cleaned and
// bounded; version_command replaces the default, for any program; the
// env given reaches it.
func TestVersion(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("é", 150) // 300 bytes
	cases := []struct {
		name, program, body string
		argv                []string
		env                 []string
		want                string
	}{
		{"node", "node", `[ "$1" = --version ] && echo v24.22.3`, nil, nil, "v24.22.3"},
		{"leading blank lines", "python3.11", `[ "$1" = --version ] && printf '\n\n  Python 3.11.2  \nmore\n'`, nil, nil, "Python 3.11.2"},
		{"stderr only", "java", `[ "$1" = -version ] && echo "openjdk version 21.0.1" >&2`, nil, nil, "openjdk version 21.0.1"},
		{"nginx -v", "nginx", `[ "$1" = -v ] && echo "nginx version: nginx/1.22.1" >&2`, nil, nil, "nginx version: nginx/1.22.1"},
		{"control characters dropped", "ruby", `printf 'v1\033[0m.2\r\n'`, nil, nil, "v1[0m.2"},
		{"cut at 200 bytes on a rune boundary", "php", `echo ` + long, nil, nil, strings.Repeat("é", 100)},
		{"version_command", "wrap.sh", `[ "$1" = -V ] && echo "custom $2"`, []string{"", "-V", "x"}, nil, "custom x"},
		{"env", "dotnet", `echo "$RUNTIME_FLAVOUR"`, nil, []string{"RUNTIME_FLAVOUR=lts"}, "lts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := script(t, c.program, c.body)
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

// TestVersionGoBinary: a Go binary's version is its build information,
// read without running it (this test binary, run with --version, would
// refuse the flag).
func TestVersionGoBinary(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Version(context.Background(), self, nil, "", nil, VersionTimeout)
	if err != nil || got != runtime.Version() {
		t.Errorf("got %q, %v; want %q", got, err, runtime.Version())
	}
}

// TestVersionUnknownNotRun: a program that is neither a Go binary nor a
// known runtime (a wrapper that ignores --version and starts the server)
// is not run at all: its version is unknown.
func TestVersionUnknownNotRun(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran")
	for _, name := range []string{"wrap.sh", "npm", "server", "node.sh", "python3.x"} {
		bin := script(t, name, `touch `+ran+`; sleep 300 & wait`)
		start := time.Now()
		_, err := Version(context.Background(), bin, nil, "", nil, VersionTimeout)
		if !errors.Is(err, ErrVersionUnknown) {
			t.Errorf("%s: got %v; want ErrVersionUnknown", name, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v: was it run?", name, d)
		}
		if _, err := os.Stat(ran); err == nil {
			t.Fatalf("%s was run for its version", name)
		}
	}
}

// TestVersionFails: a known runtime that exits non-zero, prints nothing,
// does not exist or never answers gives an error naming the command; the
// one that never answers is killed with what it started, a setsid
// grandchild included.
func TestVersionFails(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ name, body, want string }{
		{"exit 2", `echo "flag provided but not defined: -version" >&2; exit 2`, "exit status 2"},
		{"silent", `exit 0`, "printed nothing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := script(t, "node", c.body)
			_, err := Version(ctx, bin, nil, "", nil, VersionTimeout)
			if err == nil || !strings.Contains(err.Error(), bin+" --version") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v; want an error naming %s --version: %s", err, bin, c.want)
			}
		})
	}
	if _, err := Version(ctx, filepath.Join(t.TempDir(), "node"), nil, "", nil, VersionTimeout); err == nil || errors.Is(err, ErrVersionUnknown) {
		t.Error("a missing program gave a version")
	}
	if _, err := Version(ctx, "", nil, "", nil, VersionTimeout); err == nil {
		t.Error("no program gave a version")
	}

	// A server that ignores --version and serves: killed at the timeout,
	// its child and its setsid grandchild too. The timeout leaves a busy
	// machine time to start both (at 300 ms, a loaded CI machine once
	// killed the script before its grandchild existed).
	pidFile := filepath.Join(t.TempDir(), "pids")
	bin := script(t, "node", `sleep 300 & echo $! > `+pidFile+`; (setsid sh -c 'echo $$ >> `+pidFile+`; exec sleep 300' &); wait`)
	_, err := Version(ctx, bin, nil, "", nil, 2*time.Second)
	if err == nil || !strings.Contains(err.Error(), "no answer within 2s") {
		t.Fatalf("got %v; want no answer within 2s", err)
	}
	b, _ := os.ReadFile(pidFile)
	pids := strings.Fields(string(b))
	if len(pids) != 2 {
		t.Fatalf("the script recorded %q, want its child and grandchild", b)
	}
	for _, p := range pids {
		pid, _ := strconv.Atoi(p)
		if st, err := os.ReadFile("/proc/" + p + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d started by a program that timed out still runs: %s", pid, st)
		}
	}
}
