package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// builds holds the programs the tests build (benchrig itself, the example
// servers): each is built once per test process, into a directory under
// the package's TMPDIR (TestMain removes it), and every test gets a hard
// link of its own to the one build. A test's binary thus keeps a path
// only its own processes show (the tests that look for their leftover
// processes match on it), as when each test built its own.
var builds struct {
	mu  sync.Mutex
	dir string
	m   map[string]*build
}

type build struct {
	once sync.Once
	path string
	err  error
}

// goBuild builds the package at pkg (relative to this directory) once per
// test process and returns the shared binary, named name. Callers that
// start it, rename it or look for its processes use linkBuild instead.
func goBuild(t *testing.T, pkg, name string) string {
	t.Helper()
	builds.mu.Lock()
	if builds.m == nil {
		builds.m = map[string]*build{}
	}
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "test-builds-")
		if err != nil {
			builds.mu.Unlock()
			t.Fatal(err)
		}
		builds.dir = dir
	}
	b, ok := builds.m[pkg]
	if !ok {
		b = &build{}
		builds.m[pkg] = b
	}
	dir := builds.dir
	builds.mu.Unlock()
	b.once.Do(func() {
		out, err := os.MkdirTemp(dir, name+"-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(out, name)
		if msg, err := exec.Command("go", "build", "-o", b.path, pkg).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("build %s: %v\n%s", pkg, err, msg)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// linkBuild returns the program built from pkg at dir/name: a hard link
// to the one build (a copy where a link cannot be made), a file of the
// test's own that it may rename or replace.
func linkBuild(t *testing.T, pkg, dir, name string) string {
	t.Helper()
	src := goBuild(t, pkg, name)
	dst := filepath.Join(dir, name)
	if err := os.Link(src, dst); err != nil {
		// cp, not a copy written here: a file this process holds open
		// for writing may not be executed (ETXTBSY) while a parallel
		// test forks.
		if out, err := exec.Command("cp", src, dst).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v\n%s", src, err, out)
		}
	}
	return dst
}

// writeExecutable writes data to path, mode 0755, through a child process
// (cat), never through a descriptor of this process: a file this process
// held open for writing could not be executed (ETXTBSY) while a child that
// a parallel test forked meanwhile still held the descriptor.
func writeExecutable(t *testing.T, path string, data []byte) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `cat > "$1" && chmod 755 "$1"`, "sh", path)
	cmd.Stdin = bytes.NewReader(data)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("write %s: %v\n%s", path, err, out)
	}
}

// runBuilt runs the built benchrig in dir with env added to this
// process's environment, for a test that needs a working directory or
// variables of its own and still runs beside the others (t.Chdir and
// t.Setenv would make it run alone). The run is bounded by the test's
// deadline, or 10 minutes.
func runBuilt(t *testing.T, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	br := linkBuild(t, ".", t.TempDir(), "benchrig")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, br, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	// Ctrl-C, as a user would: benchrig stops its targets and removes
	// its temp dirs; killed only if it has not exited 30 s later.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.Exited():
		code = ee.ExitCode()
	default:
		t.Fatalf("benchrig %v: %v\n%s\n%s", args, err, o.String(), e.String())
	}
	return o.String(), e.String(), code
}
