package target

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/benchrig/benchrig/internal/cgroup"
	"github.com/benchrig/benchrig/internal/proc"
)

// watched is a target started under a watchdog (see watchdog.go): the
// watchdog's command, the target's PID, and the pipes to the watchdog.
type watched struct {
	wd         *exec.Cmd
	pid        int           // the target's PID (and process group ID)
	ctl        *os.File      // write end of the control pipe; closing it kills the tree
	status     *bufio.Reader // read end of the status pipe
	statusFile *os.File
}

// spawn starts argv under a watchdog: benchrig re-executed with watchdogArg,
// in its own process group, with a parent-death signal (SIGTERM) and, when
// cpus is not empty, pinned to those CPUs from its first instruction, so
// the target it forks inherits the mask. The fork runs on a locked thread
// (see proc.OnPinnedThread) so that the parent-death signal fires when
// benchrig dies, not when a thread of it ends. It returns once the watchdog
// has reported the target's PID, or the reason the exec failed.
//
// path is argv[0] resolved in $PATH (or as given when it holds a slash);
// env is the target's whole environment, sent with its command on the
// control pipe (the watchdog's own is empty: see watchdogEnv); dir is the
// watchdog's working directory and the target's; stdout and stderr are the
// target's (and the watchdog's, which writes there only when it cannot
// start). ref, when not nil, is the cgroup to run the target in (see
// limits.go).
func spawn(path string, argv, env []string, dir string, stdout, stderr *os.File, cpus []int, ref *cgroup.Ref) (*watched, error) {
	// /proc/self/exe is the running binary itself, even if its file has
	// been replaced or removed since (a rebuild during a run): never
	// another version speaking another protocol.
	self := "/proc/self/exe"
	if _, err := os.Stat(self); err != nil {
		if self, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("find benchrig's own executable to run the watchdog: %w", err)
		}
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stR, stW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return nil, err
	}
	// The target's command goes on the control pipe, not on the
	// watchdog's argv (see watchdog.go).
	cmd := exec.Command(self, watchdogArg, strconv.Itoa(os.Getpid()))
	cmd.Args[0] = "benchrig-watchdog"
	cmd.Env, cmd.Dir = watchdogEnv(), dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = []*os.File{ctlR, stW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	err = proc.OnPinnedThread(cpus, cmd.Start)
	ctlR.Close()
	stW.Close()
	if err != nil {
		ctlW.Close()
		stR.Close()
		return nil, err
	}
	w := &watched{wd: cmd, ctl: ctlW, status: bufio.NewReader(stR), statusFile: stR}
	if err := writeCommand(ctlW, command{Path: path, Argv: argv, Env: dedupEnv(env), Cgroup: ref}); err != nil {
		w.abort()
		return nil, fmt.Errorf("watchdog: send the command: %w", err)
	}
	line, err := w.next()
	if err != nil {
		w.abort()
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	if rest, ok := strings.CutPrefix(line, "error "); ok {
		w.abort()
		num, msg, _ := strings.Cut(rest, " ")
		if n, err := strconv.Atoi(num); err == nil && n > 0 {
			return nil, syscall.Errno(n)
		}
		return nil, errors.New(msg)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "pid "))
	if err != nil || !strings.HasPrefix(line, "pid ") || pid <= 0 {
		w.abort()
		return nil, fmt.Errorf("watchdog: unexpected report %q", line)
	}
	w.pid = pid
	return w, nil
}

// watchdogEnv is the watchdog's own environment: nothing of benchrig's (a
// secret in it would be one more process to read it from), but a coverage
// directory when a test binary measuring coverage runs it.
func watchdogEnv() []string {
	env := []string{}
	if v, ok := os.LookupEnv("GOCOVERDIR"); ok {
		env = append(env, "GOCOVERDIR="+v)
	}
	return env
}

// dedupEnv keeps the last entry of each variable, in the order of first
// appearance (as exec.Cmd does): the watchdog execs the target with the
// list as it is, and a C program's getenv would find the first one.
func dedupEnv(env []string) []string {
	last := make(map[string]int, len(env))
	for i, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		last[k] = i
	}
	out := make([]string, 0, len(last))
	seen := make(map[string]bool, len(last))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, env[last[k]])
	}
	return out
}

// next reads the watchdog's next status line; io.EOF once it has exited.
func (w *watched) next() (string, error) {
	line, err := w.status.ReadString('\n')
	if err != nil {
		if line == "" {
			return "", err
		}
		if !errors.Is(err, io.EOF) {
			return "", err
		}
	}
	return strings.TrimSuffix(line, "\n"), nil
}

// abort ends a watchdog whose start failed: the closed control pipe makes
// it kill whatever it started and exit.
func (w *watched) abort() {
	w.ctl.Close()
	_ = w.wd.Wait()
	w.statusFile.Close()
}

// affinityOf returns the CPU list a process may run on, or "" when it cannot
// be read (the process has already gone).
func affinityOf(pid int) string {
	cpus, err := proc.Affinity(pid)
	if err != nil {
		return ""
	}
	return FormatCPUList(cpus)
}
