// Command benchrig runs honest, repeatable benchmarks of network servers.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/benchrig/benchrig/internal/cgroup"
	"github.com/benchrig/benchrig/internal/exitcode"
)

func main() {
	// A target's cgroup exec shim (benchrig re-executed by a target's
	// watchdog to start a target under limits) does nothing else: into the
	// group, exec the target. internal/target's init normally runs it
	// before main, as it does the watchdog; this keeps the rule of package
	// cgroup in the one place a reader looks for it.
	cgroup.MaybeRunShim()
	// First of all: credentials on the command line leave it (reexec.go).
	args := hideArgv(os.Args[1:], os.Stderr)
	ownProcess = true
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go secondSignalExits(ctx)
	os.Exit(exitcode.Of(run(ctx, args, os.Stdout, os.Stderr), os.Stderr))
}
