// Command cpuhog keeps CPUs busy so the test suite can be run on a loaded
// machine (`make test-loaded`): -per-core busy threads for every online
// CPU, each a tight loop on an OS thread of its own. It exits on SIGTERM or
// SIGINT, when the process that started it dies (PR_SET_PDEATHSIG), or
// after -for, whichever comes first, so a hog never outlives its run.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The main goroutine stays on the main thread, the one PR_SET_PDEATHSIG is
// set on.
func init() { runtime.LockOSThread() }

func main() {
	perCore := flag.Int("per-core", 2, "busy threads per online CPU (1–16)")
	limit := flag.Duration("for", 30*time.Minute, "exit after this long (1s–2h)")
	flag.Parse()
	if *perCore < 1 || *perCore > 16 {
		fmt.Fprintf(os.Stderr, "cpuhog: -per-core %d: want 1 to 16\n", *perCore)
		os.Exit(2)
	}
	if *limit < time.Second || *limit > 2*time.Hour {
		fmt.Fprintf(os.Stderr, "cpuhog: -for %s: want 1s to 2h\n", *limit)
		os.Exit(2)
	}
	// Die with the parent (the make recipe's shell).
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "cpuhog: prctl:", err)
		os.Exit(1)
	}
	if os.Getppid() == 1 {
		os.Exit(0) // the parent died before prctl took effect
	}
	n := *perCore * runtime.NumCPU()
	runtime.GOMAXPROCS(n + 1)
	for i := 0; i < n; i++ {
		go func() {
			runtime.LockOSThread()
			x := uint64(i)
			for {
				x = x*6364136223846793005 + 1442695040888963407
				if x == 0 {
					fmt.Print("") // keeps the loop from being optimised away
				}
			}
		}()
	}
	fmt.Fprintf(os.Stderr, "cpuhog: %d busy threads on %d CPUs (pid %d, at most %s)\n", n, runtime.NumCPU(), os.Getpid(), *limit)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-sig:
	case <-time.After(*limit):
	}
}
