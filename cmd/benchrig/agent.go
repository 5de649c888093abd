package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/agent"
	"github.com/benchrig/benchrig/internal/agent/launch"
	"github.com/benchrig/benchrig/internal/cli"
)

// agentCmd is `benchrig agent`: one agent of a distributed run.
func agentCmd(a *cli.App) *cobra.Command {
	var o launch.AgentOptions
	c := &cobra.Command{
		Use:   "agent --coordinator HOST:PORT [--index I]",
		Short: "Run shares of a suite's load for a coordinator (benchrig run SUITE --agents N); stops all load when the coordinator goes away",
		Example: `  BENCHRIG_AGENT_TOKEN=… benchrig agent --coordinator 10.0.0.5:7946 --index 0
  benchrig agent --coordinator coordinator:7946 --token-file /etc/benchrig/token`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			o.IndexSet, o.Version = c.Flags().Changed("index"), version
			return launch.Agent(a.Ctx, a.Stderr, o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Coordinator, "coordinator", "", "the coordinator's HOST:PORT (its --listen)")
	f.IntVar(&o.Index, "index", -1, "this agent's index, 0 … N−1 (default: $JOB_COMPLETION_INDEX, else the coordinator picks)")
	f.StringVar(&o.TokenFile, "token-file", "", "file holding the shared token (default: $"+agent.TokenEnv+")")
	f.DurationVar(&o.DialFor, "dial-for", 2*time.Minute, "how long to retry reaching the coordinator")
	f.DurationVar(&o.Timings.AgentTimeout, "agent-timeout", agent.AgentTimeout, "how long to wait for each step of joining (after the welcome the coordinator's --dead-man counts)")
	f.StringVar(&o.TLSCA, "tls-ca", "", "speak TLS to the coordinator, trusting the CA certificate(s) of this PEM file")
	return c
}
