package resp

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/suite"
)

// Path is a RESP path of a suite (paths.NAME.resp): a command. Key is the
// key template ({id} is replaced by the workload's key); multi-key
// commands (MGET, EXISTS, DEL, UNLINK, TOUCH) take one key per batch
// element.
type Path struct {
	// Command is the command name, upper-cased when parsed.
	Command string `json:"command"`
	// Key is the key template.
	Key string `json:"key,omitempty"`
	// Value is the value written by SET-like commands.
	Value string `json:"value,omitempty"`
	// Args is a custom command's argv, each a template ({id}, {key}, {db});
	// Command is then "CUSTOM".
	Args []string `json:"args,omitempty"`
	// DB fills {db} in Key, Value and Args.
	DB string `json:"db,omitempty"`
	// ValidateSampled is the fraction (0–1) of replies compared with the
	// rows the target was filled with.
	ValidateSampled float64 `json:"validate_sampled,omitempty"`
	// Timeout bounds each request (default 10s; 0s: none).
	Timeout *suite.Duration `json:"timeout,omitempty"`
}

// MaxKeyTemplate bounds a RESP path's key template, in bytes: a key is a
// name, not a payload (redis-benchmark's keys are a few bytes).
const MaxKeyTemplate = 4 << 10

// MaxBatch is the largest batch (keys per request) of a RESP path.
const MaxBatch = 1024

// multiKey are the RESP commands that take a batch of keys.
var multiKey = map[string]bool{"MGET": true, "EXISTS": true, "DEL": true, "UNLINK": true, "TOUCH": true}

// MultiKey reports whether the command takes a batch of keys.
func (r *Path) MultiKey() bool { return multiKey[r.Command] }

var cmdRE = regexp.MustCompile(`^[A-Z][A-Z0-9]*$`)

// Defaults upper-cases the command.
func (r *Path) Defaults(suite.Field) { r.Command = strings.ToUpper(r.Command) }

// Validate checks the section.
func (r *Path) Validate(at suite.Field) {
	if r.Command == "" {
		at.Child("command").Errf("required: a RESP command, e.g. GET or MGET")
	} else if !cmdRE.MatchString(r.Command) {
		at.Child("command").Errf("invalid command %q; accepted: a command name such as GET, MGET, SET", r.Command)
	}
	if r.Command == "CUSTOM" && len(r.Args) == 0 {
		at.Child("args").Errf("required with command custom: the command's argv, e.g. [HGET, \"{key}\", name]")
	}
	if len(r.Args) > 0 && r.Command != "CUSTOM" {
		at.Child("args").Errf("only with command custom (got command %s)", r.Command)
	}
	if len(r.Key) > MaxKeyTemplate {
		at.Child("key").Errf("key template of %d bytes is longer than the bound (%d bytes, 4 KiB); accepted: a template such as item:{id}", len(r.Key), MaxKeyTemplate)
	}
	if r.ValidateSampled < 0 || r.ValidateSampled > 1 {
		at.Child("validate_sampled").Errf("must be a fraction between 0 and 1, got %v", r.ValidateSampled)
	}
	at.Child("timeout").CheckTimeout(r.Timeout)
}

// BatchProblem: at most MaxBatch keys, and only for a multi-key command.
func (r *Path) BatchProblem(path string, b int) string {
	switch {
	case b > MaxBatch:
		return fmt.Sprintf("must be ≤ %d for resp path %q, got %d", MaxBatch, path, b)
	case !r.MultiKey():
		return fmt.Sprintf("batch %d with resp path %q: %s takes one key; accepted: 1, or a multi-key command (MGET, EXISTS, DEL, UNLINK, TOUCH)", b, path, r.Command)
	}
	return ""
}

// Redacted: a RESP path holds no credential (AUTH is the target's).
func (r *Path) Redacted(secret.Policy, *secret.Set) suite.PathSpec { c := *r; return &c }
