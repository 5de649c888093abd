package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/cliflag"
	"github.com/benchrig/benchrig/internal/execute"
	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/suite"
)

// App is what every command needs of its invocation: the context that
// Ctrl-C cancels, the command line as given (for the results header, never
// os.Args), the output streams, the tool's identity, and the secrets.
type App struct {
	Ctx context.Context
	// Args is the command line as recorded and shown: credentials hidden
	// (RedactArgs).
	Args           []string
	Stdout, Stderr io.Writer
	Tool           result.Tool
	// Policy is the invocation's redaction policy (--secret-header,
	// --secret-param); Secrets holds every credential it was given or
	// found, scrubbed from all it writes.
	Policy  secret.Policy
	Secrets *secret.Set
	// SecretHeaders and SecretParams are the flags' values, added to
	// every suite's own lists.
	SecretHeaders, SecretParams []string
	// UI is --ui and its companions (RegisterUI).
	UI execute.UI
	// OwnProcess: execute.Invocation.OwnProcess.
	OwnProcess bool
}

// Invocation is what a run needs of the app (execute.Invocation).
func (a *App) Invocation() *execute.Invocation {
	return &execute.Invocation{Ctx: a.Ctx, Args: a.Args, Stdout: a.Stdout, Stderr: a.Stderr, Tool: a.Tool,
		Credentials: credentials{a.Secrets}, SecretHeaders: a.SecretHeaders, SecretParams: a.SecretParams, UI: a.UI,
		OwnProcess: a.OwnProcess}
}

// RegisterUI adds --ui, --ui-token-env and --ui-linger to a command that
// runs load (run, the quick modes, capacity).
func (a *App) RegisterUI(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&a.UI.Addr, "ui", "", "serve a live page of the run (its URL is printed first): --ui alone on 127.0.0.1 and a free port, --ui=ADDR elsewhere (a token is then required)")
	f.Lookup("ui").NoOptDefVal = "127.0.0.1:0"
	f.StringVar(&a.UI.TokenEnv, "ui-token-env", "", "with --ui off loopback: the environment variable holding the page's token (default: one generated and printed)")
	cliflag.DurationVarP(f, &a.UI.Linger, "ui-linger", "", 0, "with --ui: how long the page shows the final report after the run (0: until Ctrl-C)")
	prev := c.PreRunE
	c.PreRunE = func(c *cobra.Command, args []string) error {
		a.UI.On = a.UI.Addr != ""
		if a.UI.Linger < 0 {
			return exitcode.Usagef("--ui-linger must be ≥ 0 (0: until Ctrl-C), got %s", a.UI.Linger)
		}
		if !a.UI.On && (c.Flags().Changed("ui-token-env") || c.Flags().Changed("ui-linger")) {
			return exitcode.Usagef("--ui-token-env and --ui-linger go with --ui")
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
}

// credentials are a run's execute.Credentials: the app's set, through
// the scrubbing and resume rules of secrets.go.
type credentials struct{ set *secret.Set }

func (c credentials) Collect(s *suite.Suite, getenv func(string) string) {
	suiteSecrets(s, c.set, getenv)
}

func (c credentials) ScrubSample(s *result.Sample)         { scrubRecord(s, c.set) }
func (c credentials) ScrubHeader(h *result.Header)         { scrubRecord(h, c.set) }
func (c credentials) ScrubProvenance(p *result.Provenance) { scrubRecord(p, c.set) }
func (c credentials) Sink(next execute.Sink) execute.Sink  { return scrubSink{next: next, set: c.set} }

func (c credentials) ResumePlan(s *suite.Suite, p *suite.Plan, hdr *result.Header, stderr io.Writer) (*suite.Plan, error) {
	if live := liveResume(s, p, hdr, c.set); live != nil {
		return live, nil // the same suite as recorded, with its real credentials
	}
	return resumePlan(hdr, stderr)
}
