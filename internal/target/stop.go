package target

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Bounds of Stop after the grace period.
const (
	// stopPoll is how often Stop looks for survivors in /proc.
	stopPoll = 20 * time.Millisecond
	// killTimeout bounds the wait for the group to vanish after SIGKILL
	// (normally a few milliseconds; longer only for processes in
	// uninterruptible sleep).
	killTimeout = 5 * time.Second
)

// Stop ends the target: SIGTERM to its whole process group, up to
// Spec.StopGrace for the group to exit, then SIGKILL to the group, repeated
// until /proc shows no live process of the group. When ctx is done the grace
// period is cut short and SIGKILL follows at once. Stop is idempotent and
// safe for concurrent use: every call returns the first call's result.
//
// Processes that left the group (setsid, setpgid) are not followed.
func (p *Process) Stop(ctx context.Context) error {
	p.stopOnce.Do(func() {
		if err := p.terminate(ctx, p.spec.StopGrace); err != nil {
			p.stopErr = fmt.Errorf("stop target %q (pid %d): %w", p.spec.Name, p.pid, err)
		}
	})
	return p.stopErr
}

// terminate signals the group with SIGTERM, waits up to grace (or until ctx
// is done) for it to exit, then kills what is left and waits for the leader
// to be reaped. A zero grace skips SIGTERM.
func (p *Process) terminate(ctx context.Context, grace time.Duration) error {
	pgid := p.pid
	members, err := groupMembers(procRoot, pgid)
	if err != nil {
		return err
	}
	if len(members) == 0 {
		return p.awaitReaped()
	}
	if grace > 0 && ctx.Err() == nil {
		if err := signalGroup(pgid, syscall.SIGTERM); err != nil {
			return err
		}
		gone, err := waitGroupGone(ctx, pgid, grace)
		if err != nil {
			return err
		}
		if gone {
			return p.awaitReaped()
		}
	}
	if err := killGroup(pgid); err != nil {
		return err
	}
	return p.awaitReaped()
}

// awaitReaped waits (bounded) for the leader to have been reaped by wait.
func (p *Process) awaitReaped() error {
	t := time.NewTimer(killTimeout)
	defer t.Stop()
	select {
	case <-p.exited:
		return nil
	case <-t.C:
		return fmt.Errorf("process group gone but leader not reaped after %v", killTimeout)
	}
}

// signalGroup sends sig to every process of group pgid. A group that is
// already empty is not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("refusing to signal process group %d", pgid)
	}
	if err := unix.Kill(-pgid, sig); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("send %v to process group %d: %w", sig, pgid, err)
	}
	return nil
}

// waitGroupGone polls /proc until group pgid has no live process (true),
// d passes or ctx is done (false).
func waitGroupGone(ctx context.Context, pgid int, d time.Duration) (bool, error) {
	deadline := time.Now().Add(d)
	for {
		members, err := groupMembers(procRoot, pgid)
		if err != nil {
			return false, err
		}
		if len(members) == 0 {
			return true, nil
		}
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return false, nil
		}
		t := time.NewTimer(min(stopPoll, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// killGroup sends SIGKILL to group pgid until /proc shows no live process of
// it: a process forked while the first signal was delivered is caught by a
// later one. It gives up after killTimeout and names the survivors.
func killGroup(pgid int) error {
	deadline := time.Now().Add(killTimeout)
	for {
		if err := signalGroup(pgid, syscall.SIGKILL); err != nil {
			return err
		}
		time.Sleep(stopPoll)
		members, err := groupMembers(procRoot, pgid)
		if err != nil {
			return err
		}
		if len(members) == 0 {
			return nil
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("processes %v of group %d survive SIGKILL after %v", members, pgid, killTimeout)
		}
	}
}
