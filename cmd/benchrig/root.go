package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/agent"
	"github.com/benchrig/benchrig/internal/cli"
	"github.com/benchrig/benchrig/internal/cpuprofile"
	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/tmpdir"
)

// toolInfo is benchrig's identity as the results file records it.
func toolInfo() result.Tool {
	t := result.ReadTool(version)
	if commit != "" {
		t.Commit, t.Dirty = strings.TrimSuffix(commit, "-dirty"), strings.HasSuffix(commit, "-dirty")
	}
	return t
}

// version and commit are set at build time by the Makefile
// (-ldflags "-X main.version=… -X main.commit=…"); without them the VCS
// stamp Go embeds, if any, is used.
var (
	version = "dev"
	commit  = ""
)

// ownProcess is set by main: the process is the command alone. Tests that
// call run in-process, beside their own servers, leave it false
// (execute.Invocation.OwnProcess).
var ownProcess bool

// run is the whole CLI, testable end to end.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// The agents' shared token is benchrig's: no target, probe or
	// watchdog inherits it (a local agent is given it explicitly).
	secret.Withhold(agent.TokenEnv)
	policy, found := cli.ArgPolicy(args), &secret.Set{}
	shown := cli.RedactArgs(args, policy, found)
	stdout, stderr = found.Writer(stdout), found.Writer(stderr)
	err := runCLI(&cli.App{Ctx: ctx, Args: shown, Stdout: stdout, Stderr: stderr, Tool: toolInfo(), Policy: policy, Secrets: found, OwnProcess: ownProcess}, args)
	return policy.Error(found.Error(err))
}

// runCLI is the command tree, run on the real arguments; every error it
// returns is scrubbed of the app's secrets by run.
func runCLI(a *cli.App, args []string) error {
	ctx, stdout, stderr := a.Ctx, a.Stdout, a.Stderr
	root := &cobra.Command{
		Use:           "benchrig",
		Short:         "Honest, repeatable benchmarks of HTTP, PostgreSQL and RESP servers",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       toolInfo().VersionLine(),
	}
	root.SetVersionTemplate("benchrig {{.Version}}\n")
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return exitcode.Usage(err) })
	root.PersistentFlags().StringArrayVar(&a.SecretHeaders, "secret-header", nil,
		"a header whose value is a credential, beyond those named token, key, auth, password, secret, session, cookie… (repeatable): never recorded or shown")
	root.PersistentFlags().StringArrayVar(&a.SecretParams, "secret-param", nil,
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
		stop, err := cpuprofile.Start(cpuProfile)
		if err != nil {
			return err
		}
		c.PostRunE = nil
		stopProfile = stop
		return nil
	}
	root.AddCommand(cli.QuickCommands(a)...)
	root.AddCommand(versionCmd(stdout),
		planCmd(stdout), runCmd(a), verifyCmd(stdout), checksumCmd(stdout), reportCmd(stdout), compareCmd(stdout), exportCmd(stdout), calibrateCmd(a),
		agentCmd(a), k8sCmd(a), historyCmd(a))
	root.SetHelpCommand(helpCmd(root))
	err := root.ExecuteContext(ctx)
	stopProfile()
	return exitcode.FromCobra(root, err)
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
				return exitcode.UnknownCommand(root, args[0])
			case len(rest) > 0 && cmd.HasSubCommands():
				return exitcode.UnknownCommand(cmd, rest[0])
			}
			return cmd.Help()
		},
	}
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
			_, err := fmt.Fprint(stdout, toolInfo().VersionText())
			return err
		},
	}
}
