package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
)

// argvEnv carries the real command line into the re-executed benchrig. It
// is read and unset first thing, so no child process inherits it.
const argvEnv = "BENCHRIG_ARGV"

// maxArgvEnv bounds the command line carried in argvEnv (the kernel's
// limit on one environment string is 128 KiB).
const maxArgvEnv = 100 << 10

// hideArgv keeps credentials off benchrig's own command line, which every
// user of the machine can read (ps, /proc/PID/cmdline) for the whole run:
// when the arguments hold one (a --dsn password, a URL's userinfo or token,
// an Authorization header, a --target command's --password), benchrig
// re-executes itself in place (same PID) with the redacted arguments as
// its argv and the real ones in the environment variable BENCHRIG_ARGV
// (readable by its owner only), which the new image reads and unsets at
// once. It returns the arguments to run with. A failed re-exec is said
// on stderr, and the run goes on with the arguments it has.
func hideArgv(args []string, stderr io.Writer) []string {
	if v, ok := os.LookupEnv(argvEnv); ok {
		os.Unsetenv(argvEnv)
		var real []string
		if err := json.Unmarshal([]byte(v), &real); err == nil {
			return real
		}
		fmt.Fprintf(stderr, "benchrig: %s is not a JSON list of strings: ignored\n", argvEnv)
		return args
	}
	shown := redactArgs(args, argPolicy(args), nil)
	if slices.Equal(shown, args) {
		return args
	}
	b, err := json.Marshal(args)
	if err != nil || len(b) > maxArgvEnv {
		fmt.Fprintf(stderr, "benchrig: warning: the command line holds credentials and is too long (%d bytes, at most %d) to hide from ps\n", len(b), maxArgvEnv)
		return args
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "benchrig: warning: cannot hide the credentials of the command line from ps: %v\n", err)
		return args
	}
	env := append(os.Environ(), argvEnv+"="+string(b))
	err = syscall.Exec(exe, append([]string{os.Args[0]}, shown...), env)
	// Exec returns only on failure.
	fmt.Fprintf(stderr, "benchrig: warning: cannot hide the credentials of the command line from ps: re-exec %s: %v\n", exe, err)
	return args
}
