package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/tmpdir"
)

// version and commit are set at build time by the Makefile
// (-ldflags "-X main.version=… -X main.commit=…"); without them the VCS
// stamp Go embeds, if any, is used.
var (
	version = "dev"
	commit  = ""
)

// Exit codes: 0 success, 1 a run or setup failed, 2 bad usage, 3 the run was
// unhealthy and --fail-unhealthy was given.
const (
	exitFailed    = 1
	exitUsage     = 2
	exitUnhealthy = 3
)

// usageError is bad input from the command line: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// stopProfile ends a --cpuprofile, if one was started.
var stopProfile = func() {}

// errUnhealthy is returned after the report when --fail-unhealthy is set.
var errUnhealthy = errors.New("the run was UNHEALTHY")

// run is the whole CLI, testable end to end.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := &cobra.Command{
		Use:           "benchrig",
		Short:         "Honest, repeatable benchmarks of HTTP, PostgreSQL and RESP servers",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	var cpuProfile string
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile of benchrig itself to this file")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	root.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		// remove what a benchrig killed with SIGKILL left in the temp dir
		// (ephemeral server data, target logs); live runs' dirs stay.
		if removed, _ := tmpdir.Sweep(""); len(removed) > 0 {
			fmt.Fprintf(stderr, "benchrig: removed %d temporary dir(s) of benchrig processes that no longer run\n", len(removed))
		}
		if cpuProfile == "" {
			return nil
		}
		f, err := os.Create(cpuProfile)
		if err != nil {
			return usagef("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		c.PostRunE = nil
		stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
		return nil
	}
	root.AddCommand(versionCmd(stdout), httpCmd(ctx, stdout, stderr), respCmd(ctx, stdout, stderr), pgCmd(ctx, stdout, stderr),
		planCmd(stdout), runCmd(ctx, stdout, stderr), verifyCmd(stdout), checksumCmd(stdout), reportCmd(stdout), compareCmd(stdout), exportCmd(stdout))
	stopProfile = func() {}
	err := root.ExecuteContext(ctx)
	stopProfile()
	if err != nil && isCobraUsage(err) {
		return usageError{err}
	}
	return err
}

// isCobraUsage recognises cobra's own argument errors (unknown command,
// wrong number of arguments), which it returns as plain errors.
func isCobraUsage(err error) bool {
	var u usageError
	if errors.As(err, &u) {
		return false
	}
	msg := err.Error()
	for _, p := range []string{"unknown command ", "accepts ", "requires at least ", "requires at most ", "unknown flag", "unknown shorthand", "invalid argument "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// exitCode prints the error (one line) and maps it to an exit code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, errUnhealthy) {
		fmt.Fprintln(stderr, "benchrig:", err)
		return exitUnhealthy
	}
	fmt.Fprintln(stderr, "benchrig:", err)
	var u usageError
	if errors.As(err, &u) {
		return exitUsage
	}
	return exitFailed
}

// secondSignalExits ends the process at once on a second Ctrl-C: the first
// one cancels the run, which stops targets and writes what finished.
func secondSignalExits(ctx context.Context) {
	<-ctx.Done()
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	<-ch
	fmt.Fprintln(os.Stderr, "benchrig: second interrupt, exiting now")
	os.Exit(130)
}

func versionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print benchrig's version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			t := toolInfo()
			commit := t.Commit
			if commit == "" {
				commit = "unknown"
			}
			if t.Dirty {
				commit += " (dirty)"
			}
			_, err := fmt.Fprintf(stdout, "benchrig %s\ncommit %s\n%s\n", t.Version, commit, t.Go)
			return err
		},
	}
}
