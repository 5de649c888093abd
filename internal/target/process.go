package target

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchrig/benchrig/internal/tmpdir"

	"github.com/benchrig/benchrig/internal/cgroup"
	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/secret"
)

// preStartProbeTimeout bounds the probe attempt made before starting, which
// detects another server already answering where the target should.
const preStartProbeTimeout = 300 * time.Millisecond

// Process is a target process started by Start: the leader of its own
// process group, run under a watchdog (see watchdog.go), with its output in
// a per-run log file. Its methods are safe for concurrent use.
type Process struct {
	spec    Spec
	w       *watched
	pid     int
	logPath string
	cpus    string
	startup time.Duration

	exited    chan struct{} // closed once the leader has been reaped
	waitErr   error         // written before exited is closed
	status    string        // written before exited is closed
	wdDone    chan struct{} // closed once the watchdog has exited
	survivors string        // the watchdog's last report, written before wdDone closes
	groupErr  string        // why the watchdog could not remove the cgroup, written before wdDone closes
	ctlOnce   sync.Once
	stopOnce  sync.Once
	stopErr   error

	lim      *limited    // the cgroup of a target under limits; else nil
	stopping atomic.Bool // set once benchrig starts ending the tree
	// killedAlone says the leader ended by SIGKILL before benchrig began
	// to stop it; written before exited is closed.
	killedAlone bool
}

// Start starts the target described by spec as a fresh process group under
// a watchdog, with stdout and stderr in a per-run log file, pinned to
// spec.CPUs if set. Its whole process tree (grandchildren and daemonised
// children included) is killed when Stop is called or benchrig dies, kill
// -9 included. It then polls probe (or,
// when probe is nil, the probe spec.Ready describes; with neither the target
// counts as ready once started) until it succeeds, spec.StartTimeout passes,
// the process exits or ctx is done. On any failure the process group is
// killed and the error is a *StartError naming the target and its log file.
//
// With spec.Limits, the target's whole tree runs in a cgroup of its own for
// this start (see limits.go): when no cgroup hierarchy is usable, Start
// fails saying why; a limit that does nothing here is a warning
// (LimitWarnings). Stop, and every failed start, remove the group.
//
// ctx bounds only the start: the process outlives it and runs until Stop.
func Start(ctx context.Context, spec Spec, probe Probe) (*Process, error) {
	spec = spec.withDefaults()
	fail := func(op string, err error) error {
		return &StartError{Target: spec.Name, Op: op, Err: err}
	}
	cpus, err := spec.validate()
	if err != nil {
		return nil, fail("spec", err)
	}
	if probe == nil {
		if probe, err = spec.Ready.Probe(); err != nil {
			return nil, fail("spec", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fail("start", err)
	}
	startOp := fmt.Sprintf("start %q", spec.Argv[0])
	path := spec.Argv[0]
	if !strings.Contains(path, "/") {
		if path, err = exec.LookPath(path); err != nil {
			return nil, fail(startOp, startCause(err))
		}
	}
	if probe != nil {
		pctx, cancel := context.WithTimeout(ctx, preStartProbeTimeout)
		err := probe.Ready(pctx)
		cancel()
		if err == nil {
			return nil, fail(fmt.Sprintf("probe %s is ready before the target started (is another server using it?)", probe), nil)
		}
	}

	logFile, err := createLog(spec.LogDir, spec.Name)
	if err != nil {
		return nil, fail("log", err)
	}
	logPath := logFile.Name()
	var lim *limited
	var ref *cgroup.Ref
	if spec.Limits != nil {
		if lim, err = newLimited(spec.Name, *spec.Limits, cpus); err != nil {
			logFile.Close()
			removeEmptyLog(logPath, spec.LogDir == "")
			return nil, fail("limits", err)
		}
		r := lim.group.Ref()
		ref = &r
	}
	forked := time.Now()
	w, err := spawn(path, spec.Argv, append(secret.Environ(), spec.Env...), spec.Dir, logFile, logFile, cpus, ref)
	logFile.Close() // the watchdog and target have their own descriptors
	if err != nil {
		if lim != nil {
			ctx, cancel := context.WithTimeout(context.Background(), wdGroupTimeout)
			if rerr := lim.remove(ctx); rerr != nil {
				err = errors.Join(err, rerr)
			}
			cancel()
		}
		removeEmptyLog(logPath, spec.LogDir == "")
		var pe *proc.PinError
		if errors.As(err, &pe) {
			return nil, fail("cpus", pe.Err)
		}
		return nil, fail(startOp, startCause(err))
	}

	p := &Process{
		spec:    spec,
		w:       w,
		pid:     w.pid,
		logPath: logPath,
		cpus:    affinityOf(w.pid),
		exited:  make(chan struct{}),
		wdDone:  make(chan struct{}),
		lim:     lim,
	}
	go p.monitor()

	if probe == nil {
		p.startup = time.Since(forked)
		return p, nil
	}
	lastErr, werr := waitReady(ctx, probe, spec.StartTimeout, p.exited)
	if werr == nil && !p.Alive() {
		werr = errExited
	}
	if werr == nil {
		p.startup = time.Since(forked)
		return p, nil
	}

	// Not ready: look where it listens while it still runs, then leave
	// nothing behind.
	var listening []string
	if !errors.Is(werr, errExited) && ctx.Err() == nil {
		listening = p.listeningOn()
	}
	killErr := p.terminate(context.Background(), 0)
	serr := &StartError{Target: spec.Name, LogPath: logPath, Err: lastErr}
	switch {
	case errors.Is(werr, errExited):
		serr.Op = "exited before ready"
		serr.Err = p.waitErr
		serr.Tail = tailSummary(logPath)
	case ctx.Err() != nil:
		serr.Op = fmt.Sprintf("start canceled while waiting for %s", probe)
		serr.Err = ctx.Err()
	default:
		serr.Op = fmt.Sprintf("not ready after %v", spec.StartTimeout)
		if pp, ok := probe.(porter); ok && pp.Port() > 0 {
			serr.Op += fmt.Sprintf(" waiting for port %d", pp.Port())
		}
		serr.Listening = listening
		serr.LogHints = listenHints(logPath)
		if lastErr == nil {
			serr.Err = fmt.Errorf("%s never answered", probe)
		}
	}
	if killErr != nil {
		serr.Err = errors.Join(serr.Err, killErr)
	}
	return nil, serr
}

// removeEmptyLog removes a log file nothing was written to, and its
// directory when Start created that directory.
func removeEmptyLog(path string, ownDir bool) {
	if fi, err := os.Stat(path); err != nil || fi.Size() > 0 {
		return
	}
	if os.Remove(path) == nil && ownDir {
		_ = tmpdir.Remove(filepath.Dir(path)) // its own directory, and its lock file
	}
}

// monitor follows the watchdog's reports: the leader's end (closes
// exited), the final kill's outcome, then the watchdog's own exit (closes
// wdDone). Should the watchdog die first, the leader counts as ended.
func (p *Process) monitor() {
	exited := false
	for {
		line, err := p.w.next()
		if err != nil {
			break
		}
		switch {
		case strings.HasPrefix(line, "exit ") && !exited:
			p.status = strings.TrimPrefix(line, "exit ")
			p.waitErr = errors.New(p.status)
			p.killedAlone = p.status == "signal: killed" && !p.stopping.Load()
			exited = true
			close(p.exited)
		case strings.HasPrefix(line, "survivors "):
			p.survivors = strings.TrimPrefix(line, "survivors ")
		case strings.HasPrefix(line, "cgroup-stats ") && p.lim != nil:
			var st cgroup.Stats
			if json.Unmarshal([]byte(strings.TrimPrefix(line, "cgroup-stats ")), &st) == nil {
				p.lim.setFinal(st)
			}
		case strings.HasPrefix(line, "cgroup-error "):
			p.groupErr = strings.TrimPrefix(line, "cgroup-error ")
		}
	}
	werr := p.w.wd.Wait()
	p.w.statusFile.Close()
	if !exited {
		p.status = "watchdog ended"
		if werr != nil {
			p.status += ": " + werr.Error()
		}
		p.waitErr = errors.New(p.status)
		close(p.exited)
	}
	close(p.wdDone)
}

// Name is the target's name (Spec.Name, or the base name of the command).
func (p *Process) Name() string { return p.spec.Name }

// Spec is the spec the target was started with, defaults applied. Use
// Spec().Redacted() before logging or serializing it.
func (p *Process) Spec() Spec { return p.spec }

// PID is the process ID of the leader, which is also its process group ID:
// the root of the tree to sample (the watchdog above it is not part of it).
func (p *Process) PID() int { return p.pid }

// Exited is closed once the leader has exited and been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitStatus describes how the leader ended ("exit status 1", "signal:
// killed"), or is "" while it runs.
func (p *Process) ExitStatus() string {
	select {
	case <-p.exited:
		return p.status
	default:
		return ""
	}
}

// Alive reports whether the leader is still running.
func (p *Process) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// LogPath is the file holding the target's stdout and stderr.
func (p *Process) LogPath() string { return p.logPath }

// LogTail returns the last n lines of the log (at most the last MiB).
func (p *Process) LogTail(n int) string { return tailLines(p.logPath, n) }

// CPUs is the CPU list the target runs on, as read back from the kernel
// right after the start ("" if it could not be read).
func (p *Process) CPUs() string { return p.cpus }

// StartupTime is the time from the fork until the probe first succeeded.
func (p *Process) StartupTime() time.Duration { return p.startup }
