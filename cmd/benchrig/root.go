package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/agent"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/tmpdir"
)

// version and commit are set at build time by the Makefile
// (-ldflags "-X main.version=… -X main.commit=…"); without them the VCS
// stamp Go embeds, if any, is used.
var (
	version = "dev"
	commit  = ""
)

// Exit codes, the same for run, http, pg and resp: 0 every sample ran (and,
// with --fail-unhealthy, was HEALTHY); 1 setup failed, the run was
// interrupted, or every sample failed; 2 bad usage; 3 --fail-unhealthy and
// some sample was UNHEALTHY or failed.
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

// app is what every command needs of its invocation: the context that
// Ctrl-C cancels, the command line as given (for the results header, never
// os.Args) and the output streams.
type app struct {
	ctx context.Context
	// args is the command line as recorded and shown: credentials hidden
	// (redactArgs).
	args           []string
	stdout, stderr io.Writer
	// policy is the invocation's redaction policy (--secret-header,
	// --secret-param); secrets holds every credential it was given or
	// found, scrubbed from all it writes.
	policy  secret.Policy
	secrets *secret.Set
	// secretHeaders and secretParams are the flags' values, added to
	// every suite's own lists.
	secretHeaders, secretParams []string
}

// errUnhealthy is returned after the report when --fail-unhealthy is set.
var errUnhealthy = errors.New("the run was UNHEALTHY")

// run is the whole CLI, testable end to end.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// The agents' shared token is benchrig's: no target, probe or
	// watchdog inherits it (a local agent is given it explicitly).
	secret.Withhold(agent.TokenEnv)
	policy, found := argPolicy(args), &secret.Set{}
	shown := redactArgs(args, policy, found)
	stdout, stderr = found.Writer(stdout), found.Writer(stderr)
	err := runCLI(&app{ctx: ctx, args: shown, stdout: stdout, stderr: stderr, policy: policy, secrets: found}, args)
	return policy.Error(found.Error(err))
}

// runCLI is the command tree, run on the real arguments; every error it
// returns is scrubbed of the app's secrets by run.
func runCLI(a *app, args []string) error {
	ctx, stdout, stderr := a.ctx, a.stdout, a.stderr
	root := &cobra.Command{
		Use:           "benchrig",
		Short:         "Honest, repeatable benchmarks of HTTP, PostgreSQL and RESP servers",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(),
	}
	root.SetVersionTemplate("benchrig {{.Version}}\n")
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().StringArrayVar(&a.secretHeaders, "secret-header", nil,
		"a header whose value is a credential, beyond those named token, key, auth, password, secret, session, cookie… (repeatable): never recorded or shown")
	root.PersistentFlags().StringArrayVar(&a.secretParams, "secret-param", nil,
		"a URL query parameter whose value is a credential, beyond the names the policy knows (repeatable): recorded as NAME=[redacted]")
	var cpuProfile string
	stopProfile := func() {}
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
	root.AddCommand(versionCmd(stdout), httpCmd(a), respCmd(a), pgCmd(a),
		planCmd(stdout), runCmd(a), verifyCmd(stdout), checksumCmd(stdout), reportCmd(stdout), compareCmd(stdout), exportCmd(stdout), calibrateCmd(a),
		agentCmd(a), k8sCmd(a), historyCmd(a))
	root.SetHelpCommand(helpCmd(root))
	err := root.ExecuteContext(ctx)
	stopProfile()
	if err != nil && isCobraUsage(err) {
		if m := unknownCommandRE.FindStringSubmatch(err.Error()); m != nil {
			return unknownCommand(root, m[1])
		}
		return usageError{err}
	}
	return err
}

// unknownCommandRE matches cobra's error for an unknown command of the
// root: its name.
var unknownCommandRE = regexp.MustCompile(`^unknown command "(.*)" for "benchrig"`)

// commandHints name, for what an unknown command or export format asks
// for, the command that does it.
var commandHints = map[string]string{
	"csv":        "benchrig report RESULTS.json -f csv (one row per sample and figure)",
	"json":       "benchrig report RESULTS.json -f json (the computed summary)",
	"md":         "benchrig report RESULTS.json -o report.md",
	"markdown":   "benchrig report RESULTS.json -o report.md",
	"html":       "benchrig report RESULTS.json -o report.html",
	"text":       "benchrig report RESULTS.json",
	"txt":        "benchrig report RESULTS.json -o report.txt",
	"hdr":        "benchrig export hgrm RESULTS.json --case CASE -o DIR",
	"histogram":  "benchrig export hgrm RESULTS.json --case CASE -o DIR",
	"histograms": "benchrig export hgrm RESULTS.json --case CASE -o DIR",
	"diff":       "benchrig compare A.json B.json",
	"check":      "benchrig verify RESULTS.json",
	"validate":   "benchrig verify RESULTS.json (a results file), or benchrig plan SUITE.yaml (a suite)",
	"resume":     "benchrig run SUITE.yaml -o RESULTS.json --resume",
	"sha256":     "benchrig checksum RESULTS.json",
	"redis":      "benchrig resp",
	"postgres":   "benchrig pg",
	"postgresql": "benchrig pg",
	"https":      "benchrig http https://…",
	"h2":         "benchrig http --http2 (or an h2c:// URL)",
}

// unknownCommand is the usage error (exit 2) for a command or subcommand
// of parent that does not exist: the command that does what it asks when
// one is known, else the near names, else where the commands are listed.
func unknownCommand(parent *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, parent.CommandPath())
	if parent.SuggestionsMinimumDistance <= 0 {
		parent.SuggestionsMinimumDistance = 2 // cobra's default, set on the root only
	}
	if hint, ok := commandHints[strings.ToLower(name)]; ok {
		msg += "; use " + hint
	} else if near := parent.SuggestionsFor(name); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, " or ") + "?"
	} else {
		msg += "; see " + parent.CommandPath() + " --help"
	}
	return usageError{errors.New(msg)}
}

// helpCmd is `benchrig help [command]`: a topic that is no command is a
// usage error (cobra's own prints the usage and exits 0).
func helpCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := root.Find(args)
			switch {
			case err != nil || cmd == nil:
				return unknownCommand(root, args[0])
			case len(rest) > 0 && cmd.HasSubCommands():
				return unknownCommand(cmd, rest[0])
			}
			return cmd.Help()
		},
	}
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

// versionLine is benchrig --version: "v1.2 (commit abc…, go1.26.8)".
func versionLine() string {
	t := toolInfo()
	c := t.Commit
	if c == "" {
		c = "unknown"
	}
	if t.Dirty {
		c += ", dirty"
	}
	return fmt.Sprintf("%s (commit %s, %s)", t.Version, c, t.Go)
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
