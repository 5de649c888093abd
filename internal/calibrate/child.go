package calibrate

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/proc"
)

// The null peer runs in a process of its own: benchrig (or the test binary
// that calls Measure) re-executed with childArg as argv[1]. Its argv is
// [childArg0, childArg, PROTOCOL, PARENT_PID, MODE, LOOPS]; fd 3 is one end
// of a Unix stream socket whose other end the parent holds (the control
// socket). MODE is "poll" when the child runs on CPUs of its own, apart
// from the client's (its loops then poll rather than sleep, see server),
// else "wait"; LOOPS is how many event loops it runs (see peerLoops).
//
// Dispatch. A protocol's Responder is registered by the protocol's own
// package, in its init, which runs after this package's: so this package's
// init only notes that the process is the null peer of PROTOCOL, and
// Register, when it is called for that protocol, serves there and then and
// exits (the registering package's variables are initialised by then;
// packages that init later never matter). The parent only starts a null
// peer for a protocol registered in itself, and the child is the same
// executable (/proc/self/exe), whose inits register the same protocols: so
// every child reaches Register. Started by hand (no control socket, or
// another parent), the child exits at once; should it name a protocol
// nothing registers, a timer ends it with an error before long
// (childRegisterBound), as main or the tests of a test binary must never
// run in a null peer.
//
// Lifetime. The child listens on 127.0.0.1:0, writes "addr HOST:PORT cpu
// NANOSECONDS\n" (its CPU so far, start-up included) on the control
// socket, and serves until the socket reads EOF: the parent shut its side
// down (done) or died (the kernel closed it). It also has SIGKILL as its
// parent-death signal. The first protocol error of a connection (a
// Responder's error) goes on the socket as "error MESSAGE\n"; the parent
// reads those lines when it is done, then reaps the child.
const (
	childArg  = "__benchrig_null_peer__"
	childArg0 = "benchrig-null-peer"
	childFD   = 3
)

// childRegisterBound is how long a null-peer child waits for its protocol's
// registration before it gives up: far more than the binary's package
// initialisation takes.
const childRegisterBound = 5 * time.Second

// child is this process's null-peer role, when it is one.
var child struct {
	protocol string
	poll     bool // on CPUs of its own: poll, do not sleep
	loops    int
	guard    *time.Timer
}

// The modes of a child (its MODE argument).
const (
	modePoll = "poll"
	modeWait = "wait"
)

func init() {
	if len(os.Args) < 2 || os.Args[1] != childArg {
		return
	}
	fail := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "benchrig null peer: "+format+"\n", a...)
		os.Exit(2)
	}
	loops := 0
	if len(os.Args) == 6 && os.Args[2] != "" && (os.Args[4] == modePoll || os.Args[4] == modeWait) {
		loops, _ = strconv.Atoi(os.Args[5])
	}
	if loops < 1 || loops > maxLoops {
		fail("want the arguments %s PROTOCOL PARENT_PID %s|%s LOOPS (1 to %d): benchrig starts this process itself (calibrate)", childArg, modePoll, modeWait, maxLoops)
	}
	if ppid, err := strconv.Atoi(os.Args[3]); err != nil || ppid != os.Getppid() {
		fail("the parent is gone or is not the one named (%q): benchrig starts this process itself (calibrate)", os.Args[3])
	}
	var st unix.Stat_t
	if err := unix.Fstat(childFD, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		fail("fd %d is not the control socket: benchrig starts this process itself (calibrate)", childFD)
	}
	child.protocol, child.poll, child.loops = os.Args[2], os.Args[4] == modePoll, loops
	child.guard = time.AfterFunc(childRegisterBound, func() {
		fail("no null peer for protocol %q is registered in this binary", child.protocol)
	})
}

// serveIfChild serves protocol's null peer and exits, when this process is
// that null peer's child; else it returns.
func serveIfChild(protocol string, np NullPeer) {
	if child.protocol != protocol {
		return
	}
	child.guard.Stop()
	os.Exit(serveChild(np.New, child.poll, child.loops))
}

// serveChild is the null peer's main: it returns the exit code.
func serveChild(newResp func() Responder, poll bool, loops int) int {
	ctl := &control{fd: childFD}
	ln, addr, err := listenLoopback()
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchrig null peer: %v\n", err)
		return 1
	}
	s, err := newServer(ln, loops, poll, newResp, ctl.report)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchrig null peer: %v\n", err)
		return 1
	}
	u, sys := proc.SelfCPU()
	if err := ctl.say("addr %s cpu %d", addr, int64(u+sys)); err != nil {
		return 1
	}
	s.start()
	// Serve until the control socket reads EOF (or fails): the parent is
	// done or gone. Nothing is meant to arrive on it before.
	var b [64]byte
	for {
		n, err := unix.Read(childFD, b[:])
		if err == unix.EINTR {
			continue
		}
		if n <= 0 {
			return 0
		}
	}
}

// control is the child's side of the control socket.
type control struct {
	fd       int
	mu       sync.Mutex
	reported bool
}

// say writes one status line.
func (c *control) say(format string, a ...any) error {
	line := []byte(fmt.Sprintf(format, a...) + "\n")
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(line) > 0 {
		n, err := unix.Write(c.fd, line)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		line = line[n:]
	}
	return nil
}

// report sends the first protocol error to the parent; later ones are
// dropped (the entry holds one).
func (c *control) report(err error) {
	c.mu.Lock()
	first := !c.reported
	c.reported = true
	c.mu.Unlock()
	if first {
		_ = c.say("error %s", strings.ReplaceAll(err.Error(), "\n", " "))
	}
}
