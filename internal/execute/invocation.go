// Package execute runs a plan to a results file, the same for `benchrig
// run` and every quick mode (benchrig http|pg|resp): where the results go
// (-o, --force, --resume, --resume-changed, a file with no header), what
// a target's tree ran checked against its first record, benchrig's own
// floor before the first sample, the live status and progress lines, the
// sample in flight when Ctrl-C came, and the exit code the samples make.
package execute

import (
	"context"
	"io"

	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/suite"
)

// Invocation is what a run needs of the command that started it: the
// context that Ctrl-C cancels, the command line as recorded (credentials
// hidden), the output streams, benchrig's version, what keeps credentials
// out of everything written, and the --secret-header and --secret-param
// names, added to every suite's own lists.
type Invocation struct {
	Ctx                         context.Context
	Args                        []string
	Stdout, Stderr              io.Writer
	Tool                        result.Tool
	Credentials                 Credentials
	SecretHeaders, SecretParams []string
	// UI is --ui: a live page of the run.
	UI UI
	// OwnProcess says the process is benchrig's command alone, serving
	// nothing of its own (run.PlanOptions.OwnProcess): the command's
	// main sets it, never a test or an embedder.
	OwnProcess bool
}

// Credentials keep the credentials a run meets out of what it writes and
// shows: the command line provides them (one set per invocation).
type Credentials interface {
	// Collect adds what the suite's record hides and the credentials its
	// targets read from the environment (through getenv) or files.
	Collect(s *suite.Suite, getenv func(string) string)
	// ScrubSample, ScrubHeader and ScrubProvenance replace the known
	// credentials in a record (nil: nothing).
	ScrubSample(s *result.Sample)
	ScrubHeader(h *result.Header)
	ScrubProvenance(p *result.Provenance)
	// Sink scrubs every sample before next stores it.
	Sink(next Sink) Sink
	// ResumePlan is the plan a --resume of the file whose header is hdr
	// continues: the suite this command was given (s, p; nil for none)
	// when it is the one recorded, with its real credentials, else the
	// recorded suite's.
	ResumePlan(s *suite.Suite, p *suite.Plan, hdr *result.Header, stderr io.Writer) (*suite.Plan, error)
}

// Sink is where a run's samples go (the results file), as package run
// appends them.
type Sink = run.Sink
