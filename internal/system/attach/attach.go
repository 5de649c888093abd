// Package attach is the system of a suite's attach targets: a process that
// is already running, found by PID or by the port it listens on, sampled
// through every phase and never started or stopped by benchrig; and of
// address targets, which are only sent requests (not sampled). Both serve
// http and resp.
package attach

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/system/command"
	"github.com/benchrig/benchrig/internal/target"
)

// System is an attached process, or an address (sampled is nil then).
type System struct {
	env  system.Env
	t    *suite.Target
	port int
	host string
	// proc is the attached process; nil for an address target.
	proc *target.Attached
	info *result.TargetInfo
}

var _ system.System = (*System)(nil)

// New is the system.Factory of attach targets.
func New(env system.Env) (system.System, error) { return &System{env: env, t: env.Target}, nil }

// NewAddress is the system.Factory of address targets.
func NewAddress(env system.Env) (system.System, error) {
	return &System{env: env, t: env.Target}, nil
}

// Prepare finds the process (attach) or reads the address.
func (a *System) Prepare(ctx context.Context) (result.Provenance, error) {
	a.host, a.port = "127.0.0.1", a.t.Port
	if ad := a.t.Address; ad != nil {
		if ad.Addr != "" {
			h, p, err := net.SplitHostPort(ad.Addr)
			if err != nil {
				return result.Provenance{}, fmt.Errorf("address %q: %w", ad.Addr, err)
			}
			a.host = h
			a.port, _ = strconv.Atoi(p)
		}
		return result.Provenance{Kind: suite.KindAddress}, nil
	}
	pid := a.t.Attach.PID
	var holders []int
	if at := a.t.Attach; at.Port != 0 {
		var err error
		if at.Tree {
			pid, holders, err = proc.Default().ListenerTree(at.Port)
		} else {
			pid, err = target.PIDListeningOn(at.Port)
		}
		if err != nil {
			return result.Provenance{}, err
		}
		if a.port == 0 {
			a.port = at.Port
		}
	}
	at, err := target.Attach(pid)
	if err != nil {
		return result.Provenance{}, err
	}
	a.proc = at
	a.info = &result.TargetInfo{Name: a.env.Name + " (" + at.Comm() + ")", Kind: suite.KindAttach, PID: pid}
	if len(holders) > 0 {
		// say which processes listen, sampled through pid's tree
		ps := make([]string, len(holders))
		for i, h := range holders {
			ps[i] = strconv.Itoa(h)
		}
		a.info.Settings = map[string]string{"listeners": strings.Join(ps, ","), "sampled_root": strconv.Itoa(pid)}
		a.env.Note("Sampling the tree of pid %d: it holds every process listening on port %d (%s)\n", pid, a.t.Attach.Port, strings.Join(ps, ", "))
	}
	pv := result.Provenance{Kind: suite.KindAttach}
	if bin, err := proc.Default().Exe(pid); err == nil {
		pv.Binary = bin
		pv.SHA256, _ = system.FileSHA256(bin)
		a.info.Binary = bin
	}
	return pv, nil
}

// Close leaves the process running: benchrig did not start it.
func (a *System) Close(ctx context.Context) error { return nil }

// Spec gives a sample its driver and the attached process to sample.
func (a *System) Spec(ctx context.Context, c suite.Cell, base system.Spec) (system.Spec, error) {
	vars := a.env.Vars(map[string]string{"port": strconv.Itoa(a.port)})
	base, err := system.AddressDriver(a.env, c, base, vars, net.JoinHostPort(a.host, strconv.Itoa(a.port)), command.Checks(a.t.Checks, vars))
	if err != nil {
		return base, err
	}
	if a.proc != nil {
		base.Attach, base.AttachInfo = a.proc, a.info
	}
	return base, nil
}
