package cgroup

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The shim against plain directories: it writes its PID, then execs or
// fails with 127 and one line.
func TestShim(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "benchrig-1-2-shim")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	procs := filepath.Join(dir, "cgroup.procs")
	if err := os.WriteFile(procs, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	g := &Group{order: []string{dir}}
	args := ShimArgs(g, []string{"sh", "-c", "echo $$"})
	if want := []string{ShimArg, dir, "--", "sh", "-c", "echo $$"}; strings.Join(args, "|") != strings.Join(want, "|") {
		t.Fatalf("ShimArgs: %q, want %q", args, want)
	}
	out, err := exec.Command(os.Args[0], args...).Output()
	if err != nil {
		t.Fatalf("shim: %v", err)
	}
	// The target keeps the shim's PID, which the shim wrote.
	if got := readBack(t, dir, "cgroup.procs"); got != strings.TrimSpace(string(out)) || got == "" {
		t.Errorf("cgroup.procs %q, the target's PID %q", got, out)
	}
	if _, err := strconv.Atoi(strings.TrimSpace(string(out))); err != nil {
		t.Errorf("target printed %q", out)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{ShimArgs(g, []string{"no-such-command-benchrig"}), "no-such-command-benchrig"},
		{[]string{ShimArg, dir, "--"}, "want " + ShimArg},
		{[]string{ShimArg, "--", "true"}, "no group directory"},
		{[]string{ShimArg, "/tmp", "--", "true"}, "not a group benchrig made"},
		{[]string{ShimArg, filepath.Join(dir, "..", "benchrig-9-9-gone"), "--", "true"}, "cgroup.procs"},
	} {
		var stderr strings.Builder
		cmd := exec.Command(os.Args[0], c.args...)
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		line := stderr.String()
		if !errors.As(err, &ee) || ee.ExitCode() != 127 || !strings.Contains(line, c.want) || strings.Count(line, "\n") != 1 {
			t.Errorf("shim %q: %v, stderr %q; want status 127 and one line with %q", c.args, err, line, c.want)
		}
	}
}

// ShimArgsPath execs the file given, with argv[0] as the target sees it.
func TestShimPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "benchrig-1-2-path")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	g := &Group{order: []string{dir}}
	args := ShimArgsPath(g, sh, []string{"not-in-path-argv0", "-c", "echo $0"})
	if want := []string{ShimArg, "--path", sh, dir, "--", "not-in-path-argv0", "-c", "echo $0"}; strings.Join(args, "|") != strings.Join(want, "|") {
		t.Fatalf("ShimArgsPath: %q, want %q", args, want)
	}
	out, err := exec.Command(os.Args[0], args...).Output()
	if err != nil {
		t.Fatalf("shim: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != "not-in-path-argv0" {
		t.Errorf("the target's $0 is %q, want its argv[0] unchanged", got)
	}
}
