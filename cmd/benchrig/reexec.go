package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/benchrig/benchrig/internal/cli"
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
//
// The re-exec cannot close the window before it: for its first
// milliseconds, benchrig's command line is what the shell gave it. So the
// first time a credential arrives there (before the re-exec, never after
// it) one line on stderr says so and names the form that keeps it off the
// command line (argvNotice).
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
	shown, notice := argvNotice(args)
	if slices.Equal(shown, args) {
		return args
	}
	if notice != "" {
		fmt.Fprintln(stderr, notice)
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

// keepOff names, by the flag that brought a credential (see
// redactArgsFrom; "" for a URL), the form that keeps it off the command
// line.
var keepOff = map[string]string{
	"--dsn":              "--dsn-env NAME (or $PGDSN)",
	"--fill-from-pg-dsn": "a suite's fill_from_pg: {dsn_env: NAME} with benchrig run",
	"-H":                 "--targets FILE (header lines under its URL)",
	"--header":           "--targets FILE (header lines under its URL)",
	"--target":           "the server's settings in its environment (a suite's target env:)",
	"":                   "--targets FILE (its URL line)",
}

// argvNotice returns the arguments as ps shows them after the re-exec, and
// the one line said on stderr when they held a credential ("" when they
// held none): which flags brought one, that every user of the machine
// could read it for a few milliseconds, and what keeps it off the command
// line.
func argvNotice(args []string) (shown []string, notice string) {
	var flags, hints []string
	seen := map[string]bool{}
	shown = cli.RedactArgsFrom(args, cli.ArgPolicy(args), nil, func(flag string) {
		name := flag
		if name == "" {
			name = "a URL"
		}
		if !seen[name] {
			seen[name] = true
			flags = append(flags, name)
		}
		if h := keepOff[flag]; !seen["hint "+h] {
			seen["hint "+h] = true
			hints = append(hints, h)
		}
	})
	if len(flags) == 0 {
		return shown, ""
	}
	what := "a credential"
	if len(flags) > 1 {
		what = "credentials"
	}
	return shown, fmt.Sprintf("benchrig: warning: %s on the command line (%s) could be read by every user of this machine (ps, /proc/PID/cmdline) until benchrig hid it a few milliseconds after starting; %s keeps it off the command line",
		what, strings.Join(flags, ", "), strings.Join(hints, "; "))
}
