package cgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// ShimArg is the first argument that makes benchrig's binary act as the
// exec shim (see MaybeRunShim).
const ShimArg = "__cgroup-exec"

// ShimArgs returns the arguments that start argv inside g: run the benchrig
// binary (os.Executable) with them, and it moves itself into g, then
// replaces itself with argv[0], looked up in PATH, keeping its PID, its
// environment and its open files. The form is
// [ShimArg, group directory..., "--", argv...].
func ShimArgs(g *Group, argv []string) []string {
	args := append([]string{ShimArg}, g.order...)
	args = append(args, "--")
	return append(args, argv...)
}

// pathFlag, right after ShimArg, gives the file to exec (see ShimArgsPath).
const pathFlag = "--path"

// ShimArgsPath is ShimArgs with the file to exec given as path (absolute,
// or relative to the working directory) rather than looked up from
// argv[0], which the target then gets unchanged as its argv[0]: as
// exec.Cmd runs a resolved Path with its Args. The form is
// [ShimArg, "--path", path, group directory..., "--", argv...].
func ShimArgsPath(g *Group, path string, argv []string) []string {
	return append([]string{ShimArg, pathFlag, path}, ShimArgs(g, argv)[1:]...)
}

// MaybeRunShim runs the exec shim when os.Args[1] is ShimArg, and does not
// return then; otherwise it returns at once. cmd/benchrig's main must call
// it first thing, before flags are parsed or anything is started, so that a
// target started with ShimArgs does nothing else before it is in its group.
// (Go cannot run code between fork and exec, and v1 cannot clone a process
// into a group, hence the re-executed binary.)
func MaybeRunShim() {
	if len(os.Args) > 1 && os.Args[1] == ShimArg {
		RunShim(os.Args[1:])
	}
}

// RunShim is the exec shim: args are those ShimArgs returned. It writes its
// own PID into cgroup.procs of every group directory named, then execs the
// target. It never returns: on any failure it prints one line on stderr and
// exits with status 127, as a shell does for a command it cannot run.
func RunShim(args []string) {
	err := runShim(args)
	fmt.Fprintf(os.Stderr, "benchrig: %s: %v\n", ShimArg, err)
	os.Exit(127)
}

func runShim(args []string) error {
	if len(args) == 0 || args[0] != ShimArg {
		return errors.New("not called as the cgroup exec shim")
	}
	path := ""
	if len(args) > 2 && args[1] == pathFlag {
		path = args[2]
		if path == "" {
			return errors.New("empty path after " + pathFlag)
		}
		args = append([]string{ShimArg}, args[3:]...)
	}
	sep := slices.Index(args, "--")
	if sep < 0 || sep == len(args)-1 {
		return fmt.Errorf("want %s <group directory>... -- <command> [args...], got %q", ShimArg, args)
	}
	dirs, argv := args[1:sep], args[sep+1:]
	if len(dirs) == 0 {
		return errors.New("no group directory given")
	}
	for _, dir := range dirs {
		if !filepath.IsAbs(dir) || !strings.HasPrefix(filepath.Base(dir), namePrefix) {
			return fmt.Errorf("%q is not a group benchrig made (want an absolute path to a %s* directory)", dir, namePrefix)
		}
	}
	if err := addPID(dirs, os.Getpid()); err != nil {
		return err
	}
	if path == "" {
		var err error
		if path, err = exec.LookPath(argv[0]); err != nil {
			return err
		}
	}
	err := syscall.Exec(path, argv, os.Environ())
	return fmt.Errorf("exec %s: %w", path, err)
}
