// Package command is the system of a suite's command targets: a program
// benchrig starts fresh for every sample (its own process group, a log
// file, a readiness probe), samples through every phase and stops at the
// end of the sample. It serves the protocols suite.Capabilities lists for
// the kind: http, and resp (e.g. redis-server --port {port}).
package command

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/target"
)

// System is a command target variant, started fresh for every sample.
type System struct {
	env  system.Env
	t    *suite.Target
	port int
}

var _ system.System = (*System)(nil)

// New is the system.Factory of command targets.
func New(env system.Env) (system.System, error) {
	return &System{env: env, t: env.Target}, nil
}

// Prepare picks the port (the target's, or a free one) and records the
// binary's provenance (path, SHA-256, git revision, runtime version).
func (c *System) Prepare(ctx context.Context) (result.Provenance, error) {
	c.port = c.t.Port
	if c.port == 0 {
		p, err := FreePort()
		if err != nil {
			return result.Provenance{}, err
		}
		c.port = p
	}
	pv := c.provenance()
	pv.Version = c.runtimeVersion(ctx, pv.Binary)
	return pv, nil
}

// Close has nothing to stop: each sample stops its own process.
func (c *System) Close(ctx context.Context) error { return nil }

// Spec gives a sample its driver, a starter of a fresh process and the
// target's checks.
func (c *System) Spec(ctx context.Context, cell suite.Cell, base system.Spec) (system.Spec, error) {
	base, err := system.AddressDriver(c.env, cell, base, c.vars(), net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)), c.checks())
	if err != nil {
		return base, err
	}
	base.Start = c.starter()
	return base, nil
}

// vars are the placeholders the runner fills: {port} and the params.
func (c *System) vars() map[string]string {
	return c.env.Vars(map[string]string{"port": strconv.Itoa(c.port)})
}

func (c *System) spec() target.Spec {
	v := c.vars()
	var env []string
	for k, val := range c.t.Env {
		env = append(env, k+"="+suite.Expand(val, v))
	}
	env = append(env, c.env.CompanionEnv...) // a companion's DSN, never on argv
	sort.Strings(env)
	argv := make([]string, len(c.t.Command))
	for i, a := range c.t.Command {
		argv[i] = suite.Expand(a, v)
	}
	cpus := string(c.t.CPUs)
	if cpus == "" {
		cpus = string(c.env.Suite.Placement.TargetCPUs)
	}
	s := target.Spec{Name: c.env.Name, Argv: argv, Env: env, Dir: suite.Expand(c.t.Dir, v), CPUs: cpus, LogDir: c.env.LogDir}
	if c.t.Limits != nil {
		if l, err := c.t.Limits.Resolve(); err == nil { // checked by the suite
			s.Limits = &l
		}
	}
	if c.t.Ready != nil {
		s.StartTimeout = c.t.Ready.Timeout.D()
	}
	return s
}

func (c *System) probe() target.Probe {
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

func (c *System) checks() []system.Check {
	return Checks(c.t.Checks, c.vars())
}

// Checks turns a target's HTTP checks into run checks, placeholders filled.
func Checks(list []suite.Check, v map[string]string) []system.Check {
	var out []system.Check
	for _, ch := range list {
		tc := target.Check{Method: ch.Method, URL: suite.Expand(ch.URL, v), Body: suite.Expand(ch.Body, v),
			Status: ch.Status, BodyContains: ch.BodyContains}
		if ch.BodyEquals != "" {
			b := ch.BodyEquals
			tc.BodyEquals = &b
		}
		out = append(out, system.Check{Name: tc.Method + " " + secret.Policy{}.URL(tc.URL, nil), Run: func(ctx context.Context) error { return target.RunCheck(ctx, tc) }})
	}
	return out
}

// starter starts the target fresh for one sample.
func (c *System) starter() system.Starter {
	return func(ctx context.Context) (system.Target, *result.TargetInfo, error) {
		s := c.spec()
		// The record's argv has its credentials hidden (--password=x,
		// --password x, URLs with passwords) by the suite's policy.
		info := &result.TargetInfo{Name: c.env.Name, Kind: suite.KindCommand, Argv: c.env.Suite.Policy().Argv(s.Argv, nil), Dir: s.Dir}
		if bin, err := system.ResolveCommand(s.Argv[0], s.Dir); err == nil {
			info.Binary = bin
		}
		p, err := target.Start(ctx, s, c.probe())
		if err != nil {
			return nil, info, err
		}
		info.PID, info.CPUs, info.LogPath = p.PID(), p.CPUs(), p.LogPath()
		return p, info, nil
	}
}

// provenance records the binary and its git revision.
func (c *System) provenance() result.Provenance {
	pv := result.Provenance{Kind: suite.KindCommand}
	s := c.spec()
	if len(s.Argv) == 0 {
		return pv
	}
	if bin, err := system.ResolveCommand(s.Argv[0], s.Dir); err == nil {
		pv.Binary = bin
		pv.SHA256, _ = system.FileSHA256(bin)
	}
	dir := s.Dir
	if dir == "" && pv.Binary != "" {
		dir = filepath.Dir(pv.Binary)
	}
	pv.GitRev, pv.GitDirty = system.GitRevision(dir)
	return pv
}

// FreePort asks the kernel for a free loopback port.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
