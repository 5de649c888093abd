// Command benchrig runs honest, repeatable benchmarks of network servers.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/benchrig/benchrig/internal/exitcode"
)

func main() {
	// First of all: credentials on the command line leave it (reexec.go).
	args := hideArgv(os.Args[1:], os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go secondSignalExits(ctx)
	os.Exit(exitcode.Of(run(ctx, args, os.Stdout, os.Stderr), os.Stderr))
}
