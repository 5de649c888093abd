package cli

import (
	"context"
	"io"

	"github.com/benchrig/benchrig/internal/execute"
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
}

// Invocation is what a run needs of the app (execute.Invocation).
func (a *App) Invocation() *execute.Invocation {
	return &execute.Invocation{Ctx: a.Ctx, Args: a.Args, Stdout: a.Stdout, Stderr: a.Stderr, Tool: a.Tool,
		Credentials: credentials{a.Secrets}, SecretHeaders: a.SecretHeaders, SecretParams: a.SecretParams}
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
