package target

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/cgroup"
	"github.com/benchrig/benchrig/internal/proc"
)

// The watchdog: every target runs under a small process of its own, benchrig
// re-executing itself with watchdogArg as argv[1]. Linux sends the
// parent-death signal only to the direct child, and cgroups are not
// delegated to benchrig, so without it a target like `sh -c 'server &
// wait'` (npm start) or one that daemonises would outlive a benchrig killed
// with SIGKILL. The watchdog
//
//   - is a child subreaper (PR_SET_CHILD_SUBREAPER): whatever the target
//     forks and orphans, daemons included, is re-parented to it, so its
//     process tree holds every process the target ever started;
//   - starts the target as the leader of its own process group, with a
//     parent-death signal (SIGKILL) of its own;
//   - kills the whole tree (SIGKILL to the group and to every descendant,
//     until none is left) when benchrig goes away (its control pipe reads
//     EOF, or its parent-death signal SIGTERM arrives) or when benchrig
//     closes the pipe to stop the target;
//   - sends SIGTERM to the group and every descendant when benchrig writes
//     'T' (the polite first step of Stop);
//   - reaps every child, and reports the target's PID and how it ended on
//     a status pipe.
//
// The target, not the watchdog, is the root benchrig samples: the
// watchdog's own CPU (a blocked read and a few wait calls) is not counted.
//
// Wire protocol. argv: [benchrig-watchdog, watchdogArg, parent PID]; fd 3
// is the control pipe (read), fd 4 the status pipe (write). The target's
// command comes first on the control pipe, never on the watchdog's argv
// (which every user can read in /proc/PID/cmdline, and which would show a
// target's --password=… twice), and so is its environment, never the
// watchdog's own (which would hold a companion's DSN the watchdog has no use
// for): a 4-byte big-endian length, then a JSON object {"path", "argv",
// "env"}; control bytes follow. The watchdog's own environment is empty.
// Status lines: "pid N" once started, or "error ERRNO MESSAGE" if the exec
// failed; "exit STATUS" when the target has been reaped; after the final
// kill, for a target under limits, "cgroup-stats JSON" (the group's last
// counters, a cgroup.Stats) and "cgroup-error MESSAGE" when the group could
// not be removed; then "done" or "survivors PID…".
//
// Under limits the command also holds "cgroup", a cgroup.Ref: the watchdog
// starts the target through the cgroup exec shim (itself re-executed with
// cgroup.ShimArgsPath), so that the target is in the group from its first
// instruction while the watchdog stays outside it, and removes the group
// after the final kill.
const watchdogArg = "__benchrig_target_watchdog__"

// Control bytes benchrig writes to the watchdog.
const ctlTerm = 'T'

// Bounds of the watchdog's final kill.
const (
	wdKillPoll    = 10 * time.Millisecond
	wdKillTimeout = 5 * time.Second
)

// init turns a benchrig started as a watchdog into one before anything
// else of the program runs (main, TestMain or flag parsing): every binary
// that links this package, benchrig and test binaries alike, can start
// targets.
func init() {
	if len(os.Args) > 1 && os.Args[1] == watchdogArg {
		os.Exit(runWatchdog(os.Args[2:]))
	}
	// The exec shim of a target under limits, which the watchdog starts:
	// into the group, then exec the target.
	cgroup.MaybeRunShim()
}

// shimArg0 is the exec shim's argv[0], for the milliseconds before it
// execs the target.
const shimArg0 = "benchrig-cgroup-shim"

// Bound of the watchdog's removal of a target's cgroup after the final
// kill.
const wdGroupTimeout = 3 * time.Second

// runWatchdog is the watchdog's main. It returns the exit code: 0 when the
// tree was emptied, 2 for bad arguments, 3 when processes survived.
func runWatchdog(args []string) int {
	// The target's parent-death signal is tied to the thread that forks
	// it: keep the fork on this thread, which lives as long as the process.
	runtime.LockOSThread()
	ctl, status := os.NewFile(3, "control"), os.NewFile(4, "status")
	if ctl == nil || status == nil || len(args) < 1 {
		fmt.Fprintln(os.Stderr, "benchrig watchdog: started without its pipes or arguments")
		return 2
	}
	// Neither pipe may leak into the target: a target holding the status
	// pipe would hide the watchdog's death from benchrig.
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	say := func(format string, a ...any) { fmt.Fprintf(status, format+"\n", a...) }

	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGCHLD)
	signal.Ignore(syscall.SIGINT, syscall.SIGQUIT, syscall.SIGPIPE)
	if ppid, err := strconv.Atoi(args[0]); err != nil || os.Getppid() != ppid {
		return 0 // benchrig died before the parent-death signal was armed
	}
	command, err := readCommand(ctl)
	if err != nil {
		say("error 0 read the target's command: %v", err)
		return 2
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		say("error %d become a child subreaper: %v", err.(syscall.Errno), err)
		return 2
	}

	path, argv := command.Path, command.Argv
	var group *cgroup.Group
	if command.Cgroup != nil {
		if group, err = cgroup.Open(*command.Cgroup); err != nil {
			say("error 0 %v", err)
			return 2
		}
		// The child's /proc/self/exe is this binary until it execs.
		path, argv = "/proc/self/exe", append([]string{shimArg0}, cgroup.ShimArgsPath(group, command.Path, command.Argv)...)
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   command.Env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		errno, _ := err.(syscall.Errno)
		say("error %d %v", int(errno), err)
		return 0
	}
	say("pid %d", pid)

	ctlEvents := make(chan byte, 4)
	go func() {
		r := bufio.NewReader(ctl)
		for {
			c, err := r.ReadByte()
			if err != nil {
				close(ctlEvents) // EOF: benchrig closed it or died
				return
			}
			ctlEvents <- c
		}
	}()

	w := &watchdog{fs: proc.Default(), self: os.Getpid(), target: pid, say: say, group: group}
	w.reap() // a target that exited before SIGCHLD was watched
	for {
		select {
		case c, ok := <-ctlEvents:
			if !ok {
				return w.finalKill()
			}
			if c == ctlTerm {
				w.signalTree(syscall.SIGTERM)
			}
		case sig := <-sigs:
			if sig == syscall.SIGCHLD {
				w.reap()
				continue
			}
			return w.finalKill()
		}
	}
}

// maxCommandBytes bounds the target command sent on the control pipe.
const maxCommandBytes = 4 << 20

// command is what benchrig sends the watchdog: the target's resolved path,
// its argv and its whole environment.
type command struct {
	Path string   `json:"path"`
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	// Cgroup is the group to run the target in, for a target under limits.
	Cgroup *cgroup.Ref `json:"cgroup,omitempty"`
}

// writeCommand sends the target's command on the control pipe.
func writeCommand(w io.Writer, c command) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if len(b) > maxCommandBytes {
		return fmt.Errorf("the target's command and environment are %d bytes, at most %d", len(b), maxCommandBytes)
	}
	hdr := make([]byte, 4, 4+len(b))
	binary.BigEndian.PutUint32(hdr, uint32(len(b)))
	_, err = w.Write(append(hdr, b...))
	return err
}

// readCommand reads what writeCommand sent. It reads exactly that many
// bytes, so the control bytes after it stay in the pipe.
func readCommand(r io.Reader) (command, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return command{}, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxCommandBytes {
		return command{}, fmt.Errorf("command of %d bytes, at most %d", n, maxCommandBytes)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return command{}, err
	}
	var c command
	if err := json.Unmarshal(b, &c); err != nil || c.Path == "" || len(c.Argv) == 0 {
		return command{}, fmt.Errorf("command of %d bytes: want a JSON object {path, argv, env}", n)
	}
	return c, nil
}

// watchdog is the state of the watchdog process.
type watchdog struct {
	fs         proc.FS
	self       int // the watchdog's PID
	target     int // the target's PID, also its process group ID
	targetDone bool
	say        func(format string, a ...any)
	group      *cgroup.Group // the target's cgroup, under limits; else nil
}

// reap collects every child that has exited, and reports the target's end.
func (w *watchdog) reap() {
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err != nil || wpid <= 0 {
			return
		}
		if wpid == w.target && !w.targetDone {
			w.targetDone = true
			w.say("exit %s", describeWait(ws))
		}
	}
}

// signalTree sends sig to the target's process group (while its leader has
// not been reaped: after that the group ID could be reused) and to every
// descendant of the watchdog, those that left the group included. It
// returns the descendants it found.
func (w *watchdog) signalTree(sig syscall.Signal) []int {
	if !w.targetDone {
		_ = syscall.Kill(-w.target, sig)
	}
	tab, err := w.fs.Table()
	if err != nil {
		return nil
	}
	left := tab.Descendants(w.self)
	for _, p := range left {
		_ = syscall.Kill(p, sig)
	}
	return left
}

// finalKill kills the whole tree until nothing of it is left (or
// wdKillTimeout passes), reaping as it goes, and reports the outcome.
func (w *watchdog) finalKill() int {
	deadline := time.Now().Add(wdKillTimeout)
	for {
		left := w.signalTree(syscall.SIGKILL)
		w.reap()
		// /proc no longer lists a process that is exiting before wait4 can
		// reap it: wait until the target itself is reaped too, or its exit
		// status would be lost (and it would be reaped by init).
		if len(left) == 0 && w.targetDone {
			w.closeGroup()
			w.say("done")
			return 0
		}
		if len(left) == 0 {
			left = []int{w.target}
		}
		if !time.Now().Before(deadline) {
			w.closeGroup()
			w.say("survivors %v", left)
			return 3
		}
		time.Sleep(wdKillPoll)
	}
}

// closeGroup reports the last counters of the target's cgroup, then
// removes it, killing whatever is still in it.
func (w *watchdog) closeGroup() {
	if w.group == nil {
		return
	}
	if st, err := w.group.Stats(); err == nil {
		if b, err := json.Marshal(st); err == nil {
			w.say("cgroup-stats %s", b)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), wdGroupTimeout)
	defer cancel()
	if err := w.group.Remove(ctx); err != nil {
		w.say("cgroup-error %s", strings.ReplaceAll(err.Error(), "\n", " "))
	}
}

// describeWait words a wait status as os.ProcessState.String does:
// "exit status 1", "signal: killed".
func describeWait(ws syscall.WaitStatus) string {
	switch {
	case ws.Exited():
		return "exit status " + strconv.Itoa(ws.ExitStatus())
	case ws.Signaled():
		s := "signal: " + ws.Signal().String()
		if ws.CoreDump() {
			s += " (core dumped)"
		}
		return s
	}
	return fmt.Sprintf("wait status %#x", int(ws))
}
