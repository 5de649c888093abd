package launch

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/benchrig/benchrig/internal/agent"
	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/load"
)

// AgentOptions are benchrig agent's flags, and the version it reports.
type AgentOptions struct {
	Coordinator string
	// Index is --index; IndexSet says it was given (else
	// $JOB_COMPLETION_INDEX, else the coordinator picks).
	Index     int
	IndexSet  bool
	TokenFile string
	TLSCA     string
	DialFor   time.Duration
	Timings   agent.Timings
	Version   string
}

// Agent runs one agent of a distributed run until its coordinator ends
// it; bad flags, token or CA are usage errors.
func Agent(ctx context.Context, stderr io.Writer, o AgentOptions) error {
	coord, index, dialFor := o.Coordinator, o.Index, o.DialFor
	if coord == "" {
		return exitcode.Usagef("--coordinator HOST:PORT is required")
	}
	if !o.IndexSet {
		index = -1
		if v := os.Getenv("JOB_COMPLETION_INDEX"); v != "" { // a Kubernetes Indexed Job's pod
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n >= load.MaxShares {
				return exitcode.Usagef("JOB_COMPLETION_INDEX %q: want 0 to %d", v, load.MaxShares-1)
			}
			index = n
		}
	} else if index < 0 || index >= load.MaxShares {
		return exitcode.Usagef("--index must be 0 to %d, got %d", load.MaxShares-1, index)
	}
	if dialFor <= 0 || dialFor > time.Hour {
		return exitcode.Usagef("--dial-for must be > 0 and ≤ 1h, got %s", dialFor)
	}
	tok, err := agent.LoadToken(o.TokenFile, os.Getenv)
	if err != nil {
		return exitcode.Usage(err)
	}
	if _, err := o.Timings.Resolved(); err != nil {
		return exitcode.Usage(err)
	}
	cfg := agent.Config{Coordinator: coord, Index: index, Token: tok, DialFor: dialFor, Version: o.Version, Timings: o.Timings,
		Logf: func(format string, args ...any) { fmt.Fprintf(stderr, "benchrig agent: "+format+"\n", args...) }}
	if o.TLSCA != "" {
		if cfg.TLS, err = agent.ClientTLS(o.TLSCA, coord); err != nil {
			return exitcode.Usage(err)
		}
	}
	return agent.Run(ctx, cfg)
}
