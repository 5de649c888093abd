package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/agent"
	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
	runner "github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/suite"
)

// agentCmd is `benchrig agent`: one agent of a distributed run.
func agentCmd(a *app) *cobra.Command {
	var (
		coord     string
		index     int
		tokenFile string
		tlsCA     string
		dialFor   time.Duration
		timings   agent.Timings
	)
	c := &cobra.Command{
		Use:   "agent --coordinator HOST:PORT [--index I]",
		Short: "Run shares of a suite's load for a coordinator (benchrig run SUITE --agents N); stops all load when the coordinator goes away",
		Example: `  BENCHRIG_AGENT_TOKEN=… benchrig agent --coordinator 10.0.0.5:7946 --index 0
  benchrig agent --coordinator coordinator:7946 --token-file /etc/benchrig/token`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if coord == "" {
				return exitcode.Usagef("--coordinator HOST:PORT is required")
			}
			if !c.Flags().Changed("index") {
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
			tok, err := agent.LoadToken(tokenFile, os.Getenv)
			if err != nil {
				return exitcode.Usage(err)
			}
			if _, err := timings.Resolved(); err != nil {
				return exitcode.Usage(err)
			}
			cfg := agent.Config{Coordinator: coord, Index: index, Token: tok, DialFor: dialFor, Version: version, Timings: timings,
				Logf: func(format string, args ...any) { fmt.Fprintf(a.stderr, "benchrig agent: "+format+"\n", args...) }}
			if tlsCA != "" {
				if cfg.TLS, err = agent.ClientTLS(tlsCA, coord); err != nil {
					return exitcode.Usage(err)
				}
			}
			return agent.Run(a.ctx, cfg)
		},
	}
	f := c.Flags()
	f.StringVar(&coord, "coordinator", "", "the coordinator's HOST:PORT (its --listen)")
	f.IntVar(&index, "index", -1, "this agent's index, 0 … N−1 (default: $JOB_COMPLETION_INDEX, else the coordinator picks)")
	f.StringVar(&tokenFile, "token-file", "", "file holding the shared token (default: $"+agent.TokenEnv+")")
	f.DurationVar(&dialFor, "dial-for", 2*time.Minute, "how long to retry reaching the coordinator")
	f.DurationVar(&timings.AgentTimeout, "agent-timeout", agent.AgentTimeout, "how long to wait for each step of joining (after the welcome the coordinator's --dead-man counts)")
	f.StringVar(&tlsCA, "tls-ca", "", "speak TLS to the coordinator, trusting the CA certificate(s) of this PEM file")
	return c
}

// agentsOpts are run's --agents, --listen, --local and --token-file.
type agentsOpts struct {
	n         int
	listen    string
	local     bool
	tokenFile string
	joinFor   time.Duration
	// tlsCert and tlsKey, if set, make the coordinator speak TLS.
	tlsCert, tlsKey string
	// logResults prints the results file between markers at the end.
	logResults bool
	// timings are --dead-man and --agent-timeout.
	timings agent.Timings
}

// coordinate starts a coordinator for the run: it listens, starts the
// local agents if asked, waits for every agent with the resolved suite,
// and returns the executor and a function that ends it all.
func coordinate(a *app, o agentsOpts, resolved []byte, smoke bool) (runner.Executor, func(), error) {
	if o.n < 1 || o.n > load.MaxShares {
		return nil, nil, exitcode.Usagef("--agents must be 1 to %d, got %d", load.MaxShares, o.n)
	}
	var tok agent.Token
	var raw []byte
	var err error
	if o.local && o.tokenFile == "" && os.Getenv(agent.TokenEnv) == "" {
		tok, raw = agent.RandomToken()
	} else if tok, err = agent.LoadToken(o.tokenFile, os.Getenv); err != nil {
		return nil, nil, exitcode.Usage(err)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(a.stderr, "benchrig coordinator: "+format+"\n", args...) }
	if _, err := o.timings.Resolved(); err != nil {
		return nil, nil, exitcode.Usage(err)
	}
	cc := agent.CoordinatorConfig{Agents: o.n, Token: tok, JoinFor: o.joinFor, Logf: logf, Timings: o.timings}
	if o.tlsCert != "" || o.tlsKey != "" {
		if o.local {
			return nil, nil, exitcode.Usagef("--local agents connect over loopback: --tls-cert and --tls-key, the coordinator's certificate and key, are for remote agents")
		}
		if cc.TLS, err = agent.ServerTLS(o.tlsCert, o.tlsKey); err != nil {
			return nil, nil, exitcode.Usage(err)
		}
	}
	c, err := agent.NewCoordinator(cc)
	if err != nil {
		return nil, nil, exitcode.Usage(err)
	}
	if err := c.Listen(o.listen); err != nil {
		return nil, nil, err
	}
	logf("listening on %s for %d agents", c.Addr(), o.n)
	var locals *localAgents
	if o.local {
		if locals, err = startLocalAgents(a.stderr, o, c.Addr(), raw); err != nil {
			c.Close()
			return nil, nil, err
		}
	}
	done := func() {
		c.Close()
		if locals != nil {
			locals.stop()
		}
	}
	if err := c.Wait(a.ctx, resolved, smoke); err != nil {
		done()
		return nil, nil, err
	}
	return c.Executor(), done, nil
}

// localAgents are the agent processes of run --local, started by this
// process and ended by their PIDs.
type localAgents struct {
	cmds []*exec.Cmd
	wg   sync.WaitGroup
}

func startLocalAgents(stderr io.Writer, o agentsOpts, addr string, token []byte) (*localAgents, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--local: find benchrig's own binary: %w", err)
	}
	l := &localAgents{}
	var mu sync.Mutex
	for i := 0; i < o.n; i++ {
		args := []string{"agent", "--coordinator", addr, "--index", strconv.Itoa(i)}
		if o.timings.AgentTimeout > 0 {
			args = append(args, "--agent-timeout", o.timings.AgentTimeout.String())
		}
		if o.tokenFile != "" {
			args = append(args, "--token-file", o.tokenFile)
		}
		cmd := exec.Command(exe, args...)
		cmd.Env = os.Environ()
		if token != nil { // through the environment, never argv
			cmd.Env = append(cmd.Env, agent.TokenEnv+"="+string(token))
		}
		out, err := cmd.StderrPipe()
		if err != nil {
			l.stop()
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			l.stop()
			return nil, fmt.Errorf("--local: start agent %d: %w", i, err)
		}
		l.cmds = append(l.cmds, cmd)
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				mu.Lock()
				fmt.Fprintf(stderr, "[agent %d] %s\n", i, sc.Text())
				mu.Unlock()
			}
		}()
	}
	return l, nil
}

// stop waits a moment for the agents to leave after the coordinator's bye,
// then kills any left, by PID.
func (l *localAgents) stop() {
	exited := make(chan struct{})
	go func() {
		l.wg.Wait() // their stderr closes as they exit
		for _, c := range l.cmds {
			_ = c.Wait()
		}
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		for _, c := range l.cmds {
			if c.ProcessState == nil && c.Process != nil {
				_ = c.Process.Kill()
			}
		}
		<-exited
	}
}

// resolvedFor is the resolved suite the agents are sent: the suite's, or
// the one a resumed results file recorded.
func resolvedFor(s *suite.Suite, out output, smoke bool) ([]byte, bool, error) {
	if out.resume {
		hdr, _, _, err := result.ReadFile(out.path)
		if err != nil || hdr == nil {
			return nil, false, fmt.Errorf("%s: read the recorded suite for the agents: %v", out.path, err)
		}
		return hdr.Suite.Resolved, hdr.Smoke, nil
	}
	b, err := s.Resolved()
	return b, smoke, err
}
