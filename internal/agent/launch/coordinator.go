// Package launch starts the two sides of a distributed run as the command
// line asks for them: the coordinator of benchrig run --agents N (which
// starts --local agents as processes of its own and ends them by PID),
// and an agent of benchrig agent, its index, token and TLS from its flags
// and environment.
package launch

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/benchrig/benchrig/internal/agent"
	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/run"
)

// Options are run's --agents, --listen, --local and --token-file.
type Options struct {
	N         int
	Listen    string
	Local     bool
	TokenFile string
	JoinFor   time.Duration
	// TLSCert and TLSKey, if set, make the coordinator speak TLS.
	TLSCert, TLSKey string
	// LogResults prints the results file between markers at the end.
	LogResults bool
	// Timings are --dead-man and --agent-timeout.
	Timings agent.Timings
}

// Coordinator starts a coordinator for the run: it listens, starts the
// local agents if asked, waits for every agent with the resolved suite,
// and returns the executor and a function that ends it all.
func Coordinator(ctx context.Context, stderr io.Writer, o Options, resolved []byte, smoke bool) (run.Executor, func(), error) {
	if o.N < 1 || o.N > load.MaxShares {
		return nil, nil, exitcode.Usagef("--agents must be 1 to %d, got %d", load.MaxShares, o.N)
	}
	var tok agent.Token
	var raw []byte
	var err error
	if o.Local && o.TokenFile == "" && os.Getenv(agent.TokenEnv) == "" {
		tok, raw = agent.RandomToken()
	} else if tok, err = agent.LoadToken(o.TokenFile, os.Getenv); err != nil {
		return nil, nil, exitcode.Usage(err)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "benchrig coordinator: "+format+"\n", args...) }
	if _, err := o.Timings.Resolved(); err != nil {
		return nil, nil, exitcode.Usage(err)
	}
	cc := agent.CoordinatorConfig{Agents: o.N, Token: tok, JoinFor: o.JoinFor, Logf: logf, Timings: o.Timings}
	if o.TLSCert != "" || o.TLSKey != "" {
		if o.Local {
			return nil, nil, exitcode.Usagef("--local agents connect over loopback: --tls-cert and --tls-key, the coordinator's certificate and key, are for remote agents")
		}
		if cc.TLS, err = agent.ServerTLS(o.TLSCert, o.TLSKey); err != nil {
			return nil, nil, exitcode.Usage(err)
		}
	}
	c, err := agent.NewCoordinator(cc)
	if err != nil {
		return nil, nil, exitcode.Usage(err)
	}
	if err := c.Listen(o.Listen); err != nil {
		return nil, nil, err
	}
	logf("listening on %s for %d agents", c.Addr(), o.N)
	var locals *localAgents
	if o.Local {
		if locals, err = startLocalAgents(stderr, o, c.Addr(), raw); err != nil {
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
	if err := c.Wait(ctx, resolved, smoke); err != nil {
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

func startLocalAgents(stderr io.Writer, o Options, addr string, token []byte) (*localAgents, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--local: find benchrig's own binary: %w", err)
	}
	l := &localAgents{}
	var mu sync.Mutex
	for i := 0; i < o.N; i++ {
		args := []string{"agent", "--coordinator", addr, "--index", strconv.Itoa(i)}
		if o.Timings.AgentTimeout > 0 {
			args = append(args, "--agent-timeout", o.Timings.AgentTimeout.String())
		}
		if o.TokenFile != "" {
			args = append(args, "--token-file", o.TokenFile)
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
