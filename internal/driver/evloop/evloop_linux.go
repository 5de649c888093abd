// Package evloop is what benchrig's event loops (the HTTP and PostgreSQL
// drivers' driver.Loop implementations) share: an epoll set, an eventfd that
// wakes epoll_wait from another goroutine, the lifecycle of one Run at a time
// with Close allowed at any moment, and non-blocking writes (Poller); and,
// on it, the loop itself (Loop): the connections, the Run, the requests'
// accounting and timers and the window's end, with the protocol plugged
// in through a Handler.
//
//	var p evloop.Poller
//	if err := p.Init(64, closeAllSockets); err != nil { … }
//	if err := p.Begin(); err != nil { return err } // evloop.ErrClosed
//	defer p.End()
//	for !p.Cancelled() { evs, err := p.Wait(-1); … }
//
// A Run does not block in epoll_wait itself. Wait first asks the epoll set
// without blocking; when nothing is ready it parks the goroutine in the Go
// runtime's own poller, in which the epoll descriptor is registered (an
// epoll set is readable when it has events), and asks again once woken.
// Blocking in epoll_wait as a system call costs far more when the load
// generator has one core (GOMAXPROCS=1): the runtime's monitor takes the
// blocked thread's P away after 20 µs and starts another thread to poll the
// network, and the loop's thread must win the P back on every wake-up, a
// handful of futex wake-ups and context switches per response. Parked in
// the runtime's poller, a wake-up is one epoll_wait of the runtime's, one
// of ours and a goroutine switch.
//
// When the process is the load generator alone (driver.SetBlockInKernel,
// set by benchrig's command), a Run blocks in epoll_wait itself as a raw
// system call instead, holding its P: the runtime never learns that the
// thread sleeps, so there is no hand-off and no second epoll_wait, and the
// wake-up is the kernel's alone. The Run yields its P to the process's other
// goroutines (the sampler's timers, a signal, a cancellation) on every 32nd
// wait and after a wait that timed out or was interrupted; the
// runtime's monitor interrupts a wait that held the P 10 ms with its
// preemption signal, so nothing waits longer than that. The timeout is the
// loop's own (its next timer), never a shorter tick: arming a 1 ms timer on
// every wait cost more than the runtime's park (see bench/results).
//
// With a busy poll (driver.SetBusyPoll), a closed loop's Wait first polls
// the epoll set without blocking for up to that long, and sleeps only when
// nothing came: the server's next answer then finds the client's thread
// awake, and waking a sleeping one, which the server's CPU pays (an
// inter-processor interrupt, a VM exit in a virtual machine), is avoided.
// The time spent polling is counted (driver.BusyPolled).
//
// A closed loop whose protocol lets the loop receive for it (Feeder) goes
// on io_uring instead when it blocks in the kernel and does not busy-poll
// (ringloop_linux.go): one io_uring_enter a pass in place of an
// epoll_wait and a read and a write per connection.
package evloop

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
)

// ErrClosed is returned by Begin once Close was called.
var ErrClosed = errors.New("event loop closed")

// WakeTag is the Fd field of the events of the wake-up eventfd: a loop skips
// them (Cancelled says why it was woken).
const WakeTag = -1

// Poller is an epoll set plus a wake-up eventfd and the Run/Close
// lifecycle. Close may come from any goroutine: while a Run is in progress
// it wakes the loop, and End closes the descriptors on the loop's way out;
// otherwise it closes them at once. The zero value is not ready: call Init.
type Poller struct {
	events     []unix.EpollEvent
	epfd, evfd int
	tfd        int             // the timer (Arm), -1 until first armed
	armed      int64           // when it is armed for, math.MaxInt64: not armed
	ep         *os.File        // epfd, registered with the runtime's poller
	rc         syscall.RawConn // ep's
	deadline   time.Time       // ep's read deadline as last set
	ready      func(uintptr) bool
	k          int        // the last poll's events, in Wait's park
	errno      unix.Errno // and its error
	kernel     bool       // this Run blocks in epoll_wait (driver.BlockInKernel)
	waits      uint32     // waits in the kernel, to yield on every 32nd
	yield      bool       // the last kernel wait timed out or was interrupted
	spin       int64      // this Run's busy poll before a wait, ns (driver.BusyPoll)
	spun       int64      // the time this Run spent in it, ns
	closeConns func()
	ring       *ring         // this Run's io_uring (ringpoll_linux.go), nil: epoll
	ringErr    error         // a failure queueing on the ring, returned by RingWait
	sends      int           // RingSends since the last RingWait (their ends are posted)
	coalesced  time.Duration // the longest coalesced wait of the Run (Coalesce)

	mu        sync.Mutex
	running   bool
	closed    bool
	fdsClosed bool
	cancel    atomic.Bool
}

// Init creates the epoll set (waits return at most nevents events) and the
// eventfd. closeConns is called once when the descriptors are closed, to
// close the loop's own sockets. After a failed Init, Shutdown releases what
// was created.
func (p *Poller) Init(nevents int, closeConns func()) error {
	p.epfd, p.evfd, p.tfd, p.armed, p.closeConns = -1, -1, -1, math.MaxInt64, closeConns
	p.events = make([]unix.EpollEvent, max(nevents, 1))
	var err error
	if p.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return fmt.Errorf("epoll_create1: %w", err)
	}
	if p.evfd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, p.evfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: WakeTag}); err != nil {
		return fmt.Errorf("epoll_ctl eventfd: %w", err)
	}
	// A non-blocking descriptor makes os.NewFile register it with the
	// runtime's poller; from here on ep owns epfd.
	if err := unix.SetNonblock(p.epfd, true); err != nil {
		return fmt.Errorf("epoll set non-blocking: %w", err)
	}
	p.ep = os.NewFile(uintptr(p.epfd), "epoll")
	rc, err := p.ep.SyscallConn()
	if err != nil {
		return fmt.Errorf("epoll set: %w", err)
	}
	p.rc = rc
	p.ready = p.readyOnce
	return nil
}

// Add registers fd for events; tag and gen come back in each event's Fd and
// Pad fields (a connection index and its generation, so a loop can ignore
// events of a socket it closed earlier in the same pass).
func (p *Poller) Add(fd int, events uint32, tag, gen int32) error {
	if p.ring != nil && tag >= 0 && events == unix.EPOLLIN {
		return p.onRing(fd, int(tag), uint32(gen), false)
	}
	return unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: events, Fd: tag, Pad: gen})
}

// Mod changes the events fd is registered for. On a ring, a connection
// waited for input only (a connect completed) leaves the epoll set for a
// receive on the ring.
func (p *Poller) Mod(fd int, events uint32, tag, gen int32) error {
	if p.ring != nil && tag >= 0 && events == unix.EPOLLIN {
		return p.onRing(fd, int(tag), uint32(gen), true)
	}
	return unix.EpollCtl(p.epfd, unix.EPOLL_CTL_MOD, fd, &unix.EpollEvent{Events: events, Fd: tag, Pad: gen})
}

// Wait waits up to ms milliseconds (-1: no limit) and returns the events; an
// interrupted or timed-out wait returns none and no error. It blocks in the
// runtime's poller, not in epoll_wait (see the package comment).
func (p *Poller) Wait(ms int) ([]unix.EpollEvent, error) {
	if ms == 0 {
		return p.result(p.poll())
	}
	if p.spin > 0 {
		if k, errno, ok := p.busyPoll(); ok {
			return p.result(k, errno)
		}
	}
	if p.kernel {
		return p.waitKernel(ms)
	}
	// rc.Read polls first (ready), and parks only when nothing is ready
	var dl time.Time
	if ms > 0 {
		now := time.Now()
		dl = now.Add(time.Duration(ms) * time.Millisecond)
		// The deadline set before serves if it ends the wait no later
		// and at most a twentieth of it earlier (an early wake-up only
		// waits again): moving the runtime's timer on every park costs
		// more than the rare early wake.
		if old := p.deadline; !old.IsZero() && !old.After(dl) && dl.Sub(old) <= dl.Sub(now)/20 {
			dl = old
		}
	}
	if !dl.Equal(p.deadline) {
		if err := p.ep.SetReadDeadline(dl); err != nil {
			return nil, fmt.Errorf("epoll set deadline: %w", err)
		}
		p.deadline = dl
	}
	err := p.rc.Read(p.ready)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, nil
		}
		return nil, fmt.Errorf("epoll_wait: %w", err)
	}
	return p.result(p.k, p.errno)
}

// waitKernel is Wait blocking in epoll_wait itself, as a raw system call
// that keeps the P (see the package comment).
func (p *Poller) waitKernel(ms int) ([]unix.EpollEvent, error) {
	p.yieldBeforeWait()
	k, errno := p.epollWait(ms)
	p.yield = errno != 0 || k == 0
	return p.result(k, errno)
}

// yieldBeforeWait counts a wait in the kernel and yields the P before it
// on every 32nd, and after a wait that timed out or was interrupted
// (yield): a Run holding its P in the kernel gives the process's other
// goroutines their turn (see the package comment).
func (p *Poller) yieldBeforeWait() {
	p.waits++
	if p.yield || p.waits%32 == 0 {
		p.yield = false
		runtime.Gosched()
	}
}

// busyPoll polls the epoll set without blocking until it has events or
// the Run's busy-poll time (p.spin) is spent; ok: it had them. A Run that
// only ever polls yields its P on every 32nd wait, as a kernel wait does.
func (p *Poller) busyPoll() (k int, errno unix.Errno, ok bool) {
	if p.waits++; p.waits%32 == 0 {
		runtime.Gosched()
	}
	start := driver.Now()
	for {
		k, errno = p.poll()
		now := driver.Now()
		if k > 0 || errno != 0 {
			p.spun += now - start
			return k, errno, true
		}
		if now-start >= p.spin {
			p.spun += now - start
			return 0, 0, false
		}
	}
}

// NoBusyPoll turns the busy poll off for the rest of the Run: an open
// loop's waits are for a send's due time, which polling would only
// anticipate by burning the CPU.
func (p *Poller) NoBusyPoll() { p.spin = 0 }

// readyOnce is the runtime poller's callback of Wait (made once, in Init:
// a closure per park would allocate): it polls, keeping the answer.
func (p *Poller) readyOnce(uintptr) bool {
	p.k, p.errno = p.poll()
	return p.k > 0 || p.errno != 0
}

// poll is epoll_wait without blocking, as a raw system call: it never
// blocks, so the runtime need not know of it.
func (p *Poller) poll() (int, unix.Errno) { return p.epollWait(0) }

// epollWait is epoll_pwait into p.events (waitKernel blocks in it).
func (p *Poller) epollWait(ms int) (int, unix.Errno) { return epollPwait(p.epfd, p.events, ms) }

// result is Wait's answer for a poll's.
func (p *Poller) result(k int, errno unix.Errno) ([]unix.EpollEvent, error) {
	switch errno {
	case 0:
		return p.events[:k], nil
	case unix.EINTR:
		return nil, nil
	}
	return nil, fmt.Errorf("epoll_wait: %w", errno)
}

// Begin marks a Run in progress, or returns ErrClosed.
func (p *Poller) Begin() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	p.running = true
	p.kernel = driver.BlockInKernel()
	p.spin, p.spun = int64(driver.BusyPoll()), 0
	return nil
}

// End marks the Run finished and, if Close came during it, closes the
// descriptors.
func (p *Poller) End() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running, p.kernel = false, false
	if p.spun > 0 {
		driver.AddBusyPolled(time.Duration(p.spun))
	}
	p.spin, p.spun = 0, 0
	if p.closed {
		p.shutdownLocked()
	}
}

// Cancelled reports whether Wake (cancellation or Close) was called.
func (p *Poller) Cancelled() bool { return p.cancel.Load() }

// Wake makes a Run in progress return: Cancelled becomes true and the
// eventfd wakes epoll_wait.
func (p *Poller) Wake() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cancel.Store(true)
	if p.running && !p.fdsClosed {
		one := [8]byte{1}
		_, _ = unix.Write(p.evfd, one[:])
	}
}

// Close closes the loop: at once when no Run is in progress, else by waking
// the Run, whose End closes the descriptors. It is idempotent.
func (p *Poller) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	if !p.running {
		p.shutdownLocked()
		p.mu.Unlock()
		return nil
	}
	p.mu.Unlock()
	p.Wake()
	return nil
}

// Shutdown closes every descriptor now (the connections through
// closeConns); for a loop whose opening failed, before any Run.
func (p *Poller) Shutdown() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.shutdownLocked()
}

func (p *Poller) shutdownLocked() {
	if p.fdsClosed {
		return
	}
	p.fdsClosed = true
	if p.closeConns != nil {
		p.closeConns()
	}
	if p.evfd >= 0 {
		_ = unix.Close(p.evfd)
	}
	if p.tfd >= 0 {
		_ = unix.Close(p.tfd)
	}
	switch {
	case p.ep != nil:
		_ = p.ep.Close()
	case p.epfd >= 0:
		_ = unix.Close(p.epfd)
	}
}

// WriteNonblock writes b to a non-blocking fd until it is all written or
// the socket buffer is full. It returns what is left to write (nil when
// done), and an error other than EAGAIN.
//
// Reads and writes on the loops' non-blocking sockets are raw system calls
// (the runtime is not told of them): they never block, and a write on
// loopback, which runs the receiving side's TCP processing and wake-up,
// often takes longer than the 20 µs after which the runtime's monitor
// would otherwise hand the thread's P to another thread.
func WriteNonblock(fd int, b []byte) ([]byte, error) {
	for len(b) > 0 {
		n, errno := sysRW(unix.SYS_WRITE, fd, b)
		switch errno {
		case 0:
			b = b[n:]
		case unix.EAGAIN:
			return b, nil
		default:
			return b, errno
		}
	}
	return nil, nil
}

// ReadNonblock reads from a non-blocking fd into b, as read(2) does:
// n = 0 is the end of the stream, err is unix.EAGAIN when nothing is there.
func ReadNonblock(fd int, b []byte) (int, error) {
	n, errno := sysRW(unix.SYS_READ, fd, b)
	if errno != 0 {
		return 0, errno
	}
	return n, nil
}
