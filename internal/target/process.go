package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// preStartProbeTimeout bounds the probe attempt made before starting, which
// detects another server already answering where the target should.
const preStartProbeTimeout = 300 * time.Millisecond

// Process is a target process started by Start: the leader of its own
// process group, with its output in a per-run log file. Its methods are safe
// for concurrent use.
type Process struct {
	spec    Spec
	cmd     *exec.Cmd
	pid     int
	logPath string
	cpus    string
	startup time.Duration

	exited   chan struct{} // closed once the leader has been reaped
	waitErr  error         // written before exited is closed
	status   string        // written before exited is closed
	stopOnce sync.Once
	stopErr  error
}

// Start starts the target described by spec as a fresh process group, with
// stdout and stderr in a per-run log file, pinned to spec.CPUs if set, and
// killed by the kernel (SIGKILL) if benchrig dies. It then polls probe (or,
// when probe is nil, the probe spec.Ready describes; with neither the target
// counts as ready once started) until it succeeds, spec.StartTimeout passes,
// the process exits or ctx is done. On any failure the process group is
// killed and the error is a *StartError naming the target and its log file.
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
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	if cmd.Err != nil {
		return nil, fail(startOp, startCause(cmd.Err))
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
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Dir = spec.Dir
	forked := time.Now()
	effective, err := forkPinned(cmd, cpus)
	logFile.Close() // the child has its own descriptor
	if err != nil {
		removeEmptyLog(logPath, spec.LogDir == "")
		var pe *pinError
		if errors.As(err, &pe) {
			return nil, fail("cpus", pe.err)
		}
		return nil, fail(startOp, startCause(err))
	}

	p := &Process{
		spec:    spec,
		cmd:     cmd,
		pid:     cmd.Process.Pid,
		logPath: logPath,
		cpus:    effective,
		exited:  make(chan struct{}),
	}
	go p.wait()

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

	// Not ready: leave nothing behind.
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
		_ = os.Remove(filepath.Dir(path)) // fails harmlessly unless empty
	}
}

// wait reaps the leader and records how it ended.
func (p *Process) wait() {
	err := p.cmd.Wait()
	p.waitErr = err
	if st := p.cmd.ProcessState; st != nil {
		p.status = st.String()
	} else if err != nil {
		p.status = err.Error()
	}
	if p.waitErr == nil {
		p.waitErr = errors.New(p.status)
	}
	close(p.exited)
}

// Name is the target's name (Spec.Name, or the base name of the command).
func (p *Process) Name() string { return p.spec.Name }

// Spec is the spec the target was started with, defaults applied. Use
// Spec().Redacted() before logging or serializing it.
func (p *Process) Spec() Spec { return p.spec }

// PID is the process ID of the leader, which is also its process group ID.
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
