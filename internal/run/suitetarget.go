package run

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/target"
)

// commandTarget is a suite's command target resolved for one cell: started
// fresh for every sample.
type commandTarget struct {
	name    string
	t       *suite.Target
	port    int
	logDir  string
	defCPUs string
}

// vars are the placeholders the runner fills: {port}.
func (c *commandTarget) vars() map[string]string {
	return map[string]string{"port": strconv.Itoa(c.port)}
}

func (c *commandTarget) spec() target.Spec {
	v := c.vars()
	var env []string
	for k, val := range c.t.Env {
		env = append(env, k+"="+suite.Expand(val, v))
	}
	sort.Strings(env)
	argv := make([]string, len(c.t.Command))
	for i, a := range c.t.Command {
		argv[i] = suite.Expand(a, v)
	}
	cpus := string(c.t.CPUs)
	if cpus == "" {
		cpus = c.defCPUs
	}
	s := target.Spec{Name: c.name, Argv: argv, Env: env, Dir: suite.Expand(c.t.Dir, v), CPUs: cpus, LogDir: c.logDir}
	if c.t.Ready != nil {
		s.StartTimeout = c.t.Ready.Timeout.D()
	}
	return s
}

func (c *commandTarget) probe() target.Probe {
	v := c.vars()
	if r := c.t.Ready; r != nil {
		if r.HTTP != "" {
			return target.HTTPProbe{URL: suite.Expand(r.HTTP, v)}
		}
		if r.TCP != "" {
			return target.TCPProbe{Addr: suite.Expand(r.TCP, v)}
		}
	}
	return target.TCPProbe{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port))}
}

func (c *commandTarget) checks() []Check {
	v := c.vars()
	var out []Check
	for _, ch := range c.t.Checks {
		tc := target.Check{Method: ch.Method, URL: suite.Expand(ch.URL, v), Body: suite.Expand(ch.Body, v),
			Status: ch.Status, BodyContains: ch.BodyContains}
		if ch.BodyEquals != "" {
			b := ch.BodyEquals
			tc.BodyEquals = &b
		}
		out = append(out, Check{Name: tc.Method + " " + tc.URL, Run: func(ctx context.Context) error { return target.RunCheck(ctx, tc) }})
	}
	return out
}

// starter starts the target fresh for one sample.
func (c *commandTarget) starter() Starter {
	return func(ctx context.Context) (Target, *result.TargetInfo, error) {
		s := c.spec()
		info := &result.TargetInfo{Name: c.name, Kind: suite.KindCommand, Argv: s.Argv, Dir: s.Dir}
		p, err := target.Start(ctx, s, c.probe())
		if err != nil {
			return nil, info, err
		}
		info.PID, info.CPUs, info.LogPath = p.PID(), p.CPUs(), p.LogPath()
		return p, info, nil
	}
}

// provenance records the binary and its git revision.
func (c *commandTarget) provenance() result.Provenance {
	pv := result.Provenance{Kind: suite.KindCommand}
	s := c.spec()
	if len(s.Argv) == 0 {
		return pv
	}
	if bin, err := resolveCommand(s.Argv[0], s.Dir); err == nil {
		pv.Binary = bin
		pv.SHA256, _ = fileSHA256(bin)
	}
	dir := s.Dir
	if dir == "" && pv.Binary != "" {
		dir = filepath.Dir(pv.Binary)
	}
	pv.GitRev, pv.GitDirty = gitRevision(dir)
	return pv
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
