package target

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/benchrig/benchrig/internal/proc"
)

// Bounds of Stop after the grace period.
const (
	// stopPoll is how often, at most, Stop looks for survivors in /proc
	// (from 1 ms, doubling).
	stopPoll = 20 * time.Millisecond
	// killTimeout bounds the wait for the watchdog to have killed the tree
	// and exited (normally milliseconds; its own bound is wdKillTimeout,
	// longer only for processes in uninterruptible sleep).
	killTimeout = wdKillTimeout + wdGroupTimeout + 2*time.Second
)

// Stop ends the target: SIGTERM to its process group and to every other
// process of its tree (children that left the group or daemonised, which
// the watchdog adopted), up to Spec.StopGrace for the tree to exit, then
// SIGKILL to the whole tree until /proc shows none of it. When ctx is done
// the grace period is cut short and SIGKILL follows at once. Stop is
// idempotent and safe for concurrent use: every call returns the first
// call's result.
func (p *Process) Stop(ctx context.Context) error {
	p.stopOnce.Do(func() {
		if err := p.terminate(ctx, p.spec.StopGrace); err != nil {
			p.stopErr = fmt.Errorf("stop target %q (pid %d): %w", p.spec.Name, p.pid, err)
		}
	})
	return p.stopErr
}

// terminate asks the watchdog for SIGTERM, waits up to grace (or until ctx
// is done) for the tree to exit, then closes the control pipe, on which the
// watchdog kills what is left and exits. A zero grace skips SIGTERM.
func (p *Process) terminate(ctx context.Context, grace time.Duration) error {
	p.stopping.Store(true)
	err := p.killTree(ctx, grace)
	if p.lim != nil {
		// The watchdog removed the group after the final kill; should it
		// have failed, or died first, remove it from here.
		rctx, cancel := context.WithTimeout(context.Background(), wdGroupTimeout)
		defer cancel()
		if rerr := p.lim.remove(rctx); rerr != nil {
			if p.groupErr != "" {
				rerr = fmt.Errorf("%w (the watchdog: %s)", rerr, p.groupErr)
			}
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// killTree is terminate's first part: the tree's end.
func (p *Process) killTree(ctx context.Context, grace time.Duration) error {
	if grace > 0 && ctx.Err() == nil && len(p.tree()) > 0 {
		if _, err := p.w.ctl.Write([]byte{ctlTerm}); err == nil {
			p.waitTreeGone(ctx, grace)
		}
	}
	p.ctlOnce.Do(func() { p.w.ctl.Close() })
	t := time.NewTimer(killTimeout)
	defer t.Stop()
	select {
	case <-p.wdDone:
	case <-t.C:
		// The watchdog is stuck: kill it and the group from here.
		_ = syscall.Kill(p.w.wd.Process.Pid, syscall.SIGKILL)
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		<-p.wdDone
		return fmt.Errorf("watchdog %d did not finish killing the tree within %v", p.w.wd.Process.Pid, killTimeout)
	}
	if p.survivors != "" {
		return fmt.Errorf("processes %s of the tree survive SIGKILL after %v", p.survivors, wdKillTimeout)
	}
	return nil
}

// tree lists the live processes below the watchdog: the target and every
// process it started, daemons included.
func (p *Process) tree() []int {
	select {
	case <-p.wdDone:
		return nil
	default:
	}
	ds, err := proc.Default().Descendants(p.w.wd.Process.Pid)
	if err != nil {
		return nil
	}
	return ds
}

// waitTreeGone polls /proc until the tree has no live process, d passes or
// ctx is done.
func (p *Process) waitTreeGone(ctx context.Context, d time.Duration) {
	deadline := time.Now().Add(d)
	poll := time.Millisecond // most targets exit within milliseconds of SIGTERM
	for len(p.tree()) > 0 && ctx.Err() == nil && time.Now().Before(deadline) {
		t := time.NewTimer(min(poll, time.Until(deadline)))
		poll = min(2*poll, stopPoll)
		select {
		case <-ctx.Done():
		case <-p.wdDone:
		case <-t.C:
		}
		t.Stop()
	}
}
