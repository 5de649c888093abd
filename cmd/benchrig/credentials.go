package main

import (
	"io"

	"github.com/benchrig/benchrig/internal/execute"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/suite"
)

// invocation is what a run needs of the app (execute.Invocation).
func (a *app) invocation() *execute.Invocation {
	return &execute.Invocation{Ctx: a.ctx, Args: a.args, Stdout: a.stdout, Stderr: a.stderr, Tool: toolInfo(),
		Credentials: credentials{a.secrets}, SecretHeaders: a.secretHeaders, SecretParams: a.secretParams}
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
