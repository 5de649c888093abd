package calibrate

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/proc"
)

// Bounds of a null peer's start and stop.
var (
	// startBound: the child has said where it listens, or it is killed and
	// the level fails.
	startBound = 10 * time.Second
	// stopBound: the child has exited once told to, or it is killed.
	stopBound = 5 * time.Second
)

// peerExe is the executable a null peer runs: this very binary, even if
// its file has been replaced since (a rebuild during a run).
var peerExe = "/proc/self/exe"

// peer is the parent's handle on a null-peer child process (see child.go).
type peer struct {
	protocol string
	cmd      *exec.Cmd
	ctl      *net.UnixConn
	lines    *bufio.Reader
	stderr   *tail
	addr     string        // where the child listens
	cpus     []int         // the child's CPUs, when apart from the client's; else nil
	startCPU time.Duration // the child's CPU when it started listening
}

// startPeer starts protocol's null peer for conns connections in a child
// process and waits until it listens (startBound at most). When some online
// CPUs are outside this process's affinity, the child runs on those from
// its first instruction, and polls.
func startPeer(protocol string, conns int) (*peer, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("null peer for %s: socketpair: %w", protocol, err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "null peer control"), os.NewFile(uintptr(fds[1]), "null peer control")
	fc, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		theirs.Close()
		return nil, fmt.Errorf("null peer for %s: control socket: %w", protocol, err)
	}
	p := &peer{protocol: protocol, ctl: fc.(*net.UnixConn), stderr: &tail{max: 4 << 10}}
	p.lines = bufio.NewReader(p.ctl)
	exe := peerExe
	if exe == "/proc/self/exe" {
		if _, err := os.Stat(exe); err != nil {
			if exe, err = os.Executable(); err != nil {
				theirs.Close()
				p.ctl.Close()
				return nil, fmt.Errorf("null peer for %s: find benchrig's own executable: %w", protocol, err)
			}
		}
	}
	cpus := apartCPUs()
	mode := modeWait
	if len(cpus) > 0 {
		mode = modePoll
	}
	p.cmd = exec.Command(exe, childArg, protocol, strconv.Itoa(os.Getpid()), mode, strconv.Itoa(peerLoops(conns, cpus)))
	p.cmd.Args[0] = childArg0
	p.cmd.Env = childEnv()
	p.cmd.Stderr = p.stderr
	p.cmd.ExtraFiles = []*os.File{theirs}
	// Its own process group: a Ctrl-C at the terminal is benchrig's to
	// handle, not the peer's. The parent-death signal is tied to the
	// thread that forks: proc.OnPinnedThread forks on one the runtime
	// never ends.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = proc.OnPinnedThread(cpus, p.cmd.Start)
	var pe *proc.PinError
	if len(cpus) > 0 && errors.As(err, &pe) {
		// Not allowed there (a cpuset): share the client's CPUs, and
		// sleep between events rather than take them from it.
		cpus = nil
		p.cmd.Args[4], p.cmd.Args[5] = modeWait, strconv.Itoa(peerLoops(conns, nil))
		err = proc.OnPinnedThread(nil, p.cmd.Start)
	}
	// The child's end is the child's alone: its exit then reads as EOF.
	theirs.Close()
	if err != nil {
		p.ctl.Close()
		return nil, fmt.Errorf("null peer for %s: start %s: %w", protocol, exe, err)
	}
	if len(cpus) > 0 {
		// What the kernel made of the mask (a cpuset may narrow it).
		if got, err := proc.Affinity(p.cmd.Process.Pid); err == nil {
			cpus = got
		}
	}
	p.cpus = cpus
	if err := p.listening(); err != nil {
		p.kill() // its stderr is all read once it is reaped
		if errors.Is(err, errExitedEarly) && p.cmd.ProcessState != nil {
			err = fmt.Errorf("%w (%v)", err, p.cmd.ProcessState)
		}
		return nil, fmt.Errorf("null peer for %s: %v%s", protocol, err, p.stderr.suffix())
	}
	return p, nil
}

// errExitedEarly: the child's control socket read EOF before the child
// said where it listens.
var errExitedEarly = errors.New("exited before it listened")

// listening reads the child's first line: where it listens, and its CPU
// so far.
func (p *peer) listening() error {
	_ = p.ctl.SetReadDeadline(time.Now().Add(startBound))
	line, err := p.lines.ReadString('\n')
	_ = p.ctl.SetReadDeadline(time.Time{})
	if err != nil {
		if isTimeout(err) {
			return fmt.Errorf("not listening after %s", startBound)
		}
		return errExitedEarly // EOF: it exited (or closed the socket)
	}
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "addr" || f[2] != "cpu" {
		return fmt.Errorf("unexpected first line %q", strings.TrimSpace(line))
	}
	ns, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil {
		return fmt.Errorf("unexpected first line %q", strings.TrimSpace(line))
	}
	p.addr, p.startCPU = f[1], time.Duration(ns)
	return nil
}

// close tells the child it is done (EOF on its control socket), reads the
// rest of what it said, reaps it (killing it after stopBound) and returns
// the CPU it spent serving and its first protocol error.
func (p *peer) close() (time.Duration, error) {
	_ = p.ctl.CloseWrite()
	_ = p.ctl.SetReadDeadline(time.Now().Add(stopBound))
	var perr error
	late := false
	for {
		line, err := p.lines.ReadString('\n')
		if msg, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "error "); ok && perr == nil {
			perr = errors.New(msg)
		}
		if err != nil {
			// EOF: it has exited; else (the bound passed) it is killed.
			late = !errors.Is(err, io.EOF)
			break
		}
	}
	if late {
		_ = p.cmd.Process.Kill()
	}
	werr := p.cmd.Wait()
	p.ctl.Close()
	var cpu time.Duration
	if st := p.cmd.ProcessState; st != nil {
		cpu = max(0, st.UserTime()+st.SystemTime()-p.startCPU)
	}
	switch {
	case perr != nil:
	case late:
		perr = fmt.Errorf("null peer for %s: not gone %s after the end, killed%s", p.protocol, stopBound, p.stderr.suffix())
	case werr != nil:
		perr = fmt.Errorf("null peer for %s: %v%s", p.protocol, werr, p.stderr.suffix())
	}
	return cpu, perr
}

// isTimeout says whether err is a read deadline's.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// kill ends and reaps a child whose start failed.
func (p *peer) kill() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.ctl.Close()
}

// apartCPUs are the online CPUs outside this process's affinity (where a
// server the client measures would run), or nil when there are none or
// they cannot be read.
func apartCPUs() []int {
	online, err := proc.ParseCPUList(proc.OnlineCPUs())
	if err != nil {
		return nil
	}
	mine, err := proc.Affinity(os.Getpid())
	if err != nil {
		return nil
	}
	var apart []int
	for _, c := range online {
		if !slices.Contains(mine, c) {
			apart = append(apart, c)
		}
	}
	return apart
}

// maxLoops bounds a null peer's event loops.
const maxLoops = 8

// peerLoops is how many event loops the null peer of conns connections
// runs: one for each core the client may use, so that it is never the
// slower side, but no more than connections, nor than the CPUs apart from
// the client's when it runs there (cpus), nor maxLoops.
func peerLoops(conns int, cpus []int) int {
	n := min(load.UsableCores(), conns, maxLoops)
	if len(cpus) > 0 {
		n = min(n, len(cpus))
	}
	return max(n, 1)
}

// childEnv is the child's whole environment: nothing of benchrig's (a
// secret in it would be one more process to read it from), but a coverage
// directory when a test binary measuring coverage runs it.
func childEnv() []string {
	env := []string{}
	if v, ok := os.LookupEnv("GOCOVERDIR"); ok {
		env = append(env, "GOCOVERDIR="+v)
	}
	return env
}

// tail keeps the first max bytes written to it: the child's stderr.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b[:min(len(b), max(0, t.max-len(t.b)))]...)
	return len(b), nil
}

// suffix is ": " and what the child wrote on stderr, or "" if nothing.
func (t *tail) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := strings.TrimSpace(string(t.b)); s != "" {
		return ": " + strings.ReplaceAll(s, "\n", "; ")
	}
	return ""
}
