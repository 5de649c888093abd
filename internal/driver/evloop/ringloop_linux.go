package evloop

import (
	"errors"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
)

// A closed loop's Run goes on io_uring (uring_linux.go) instead of epoll
// when its protocol takes received bytes from the loop (Feeder: RESP's,
// PostgreSQL's and HTTP/1.1's loops, not over TLS: Loop.NoRing), the Run
// blocks in the kernel (driver.SetBlockInKernel: benchrig's own process),
// does not busy-poll, and driver.IOUring allows it. Its open connections
// leave the epoll set for the Run: each gets a multishot recv into the
// ring's buffers, its sends go on the ring (Poller.Flush), and the epoll
// set, which keeps the wake-up eventfd and any connection not open, is
// polled by the ring. A pass is then one io_uring_enter, which submits the
// pass's sends and waits, where on epoll it is an epoll_wait, a read per
// connection with data and a write per connection sent on: with 64
// connections, 0.3 system calls a request instead of 2.3. The Run's
// thread is locked to its goroutine while the ring lives (the ring is
// single-issuer), and at the Run's end every request on the ring is
// cancelled, what had arrived is handled, and the connections go back to
// the epoll set.
//
// The kernel may refuse io_uring (a sysctl, a seccomp filter, a kernel
// before 6.1): the first refusal is kept (RingRefused) and every Run of
// the process stays on epoll.

// Feeder is a Handler whose replies the loop can read for it: Feed is
// given what arrived on open c (empty: the peer closed the connection);
// ReadFailed an error receiving on it. Either is called instead of Read.
type Feeder interface {
	Handler
	Feed(c *Conn, b []byte)
	ReadFailed(c *Conn, err error)
}

// The kinds of the ring's requests, in the top byte of their user data;
// a connection's requests carry its index and 24 bits of its generation.
const (
	kindRecv = 1
	kindSend = 2
	kindPoll = 3
)

func ringData(kind uint64, tag int, gen uint32) uint64 {
	return kind<<56 | uint64(gen&0xffffff)<<32 | uint64(uint32(tag))
}

// ringBufs and ringBufSize are the provided buffers of a ring: a recv
// takes one per completion, given back as soon as its bytes are handled.
// (Variables for the tests, which make them few and small.)
var (
	ringBufs    = 128
	ringBufSize = 16 << 10
)

var (
	refusedMu sync.Mutex
	refused   error
)

// RingRefused is why the kernel refused io_uring to this process, nil if
// it has not (or was not asked).
func RingRefused() error {
	refusedMu.Lock()
	defer refusedMu.Unlock()
	return refused
}

// RingAvailable makes a ring as a Run would and closes it: nil when this
// process may use io_uring, else why not.
func RingAvailable() error {
	r, err := newRing(64, make([]byte, 2*4096), 2)
	if err != nil {
		return err
	}
	r.close()
	return nil
}

// KernelRefusesRing reports whether err (RingAvailable's, RingRefused's)
// is the machine saying no to io_uring rather than a failure of benchrig's
// use of it: a kernel without it (ENOSYS), or one that turned it off for
// this process (kernel.io_uring_disabled, a seccomp filter: EPERM,
// EACCES). The tests skip on such a machine, and fail on any other error.
func KernelRefusesRing(err error) bool {
	return errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES)
}

// RingCheck is what a test of the ring does before it begins: skip (why
// not empty) where the machine refuses io_uring (KernelRefusesRing), fail
// on any other error of RingAvailable's.
func RingCheck() (why string, err error) {
	err = RingAvailable()
	if err != nil && KernelRefusesRing(err) {
		return "the kernel refuses io_uring to this process: " + err.Error(), nil
	}
	return "", err
}

// ringBegin moves the open connections onto a new ring and reports
// whether it did; false leaves the Run on epoll.
func (l *Loop) ringBegin() bool {
	f, ok := l.H.(Feeder)
	if !ok || l.NoRing || l.paced != nil || !l.P.kernel || l.P.spin > 0 || !driver.IOUring() || RingRefused() != nil {
		return false
	}
	runtime.LockOSThread()
	if len(l.ringBufs) != ringBufs*ringBufSize {
		l.ringBufs = make([]byte, ringBufs*ringBufSize)
	}
	r, err := newRing(max(64, 2*len(l.Conns)+8), l.ringBufs, ringBufs)
	if err == nil {
		err = r.pollIn(l.P.epfd, ringData(kindPoll, 0, 0))
		if err != nil {
			r.close()
		}
	}
	if err != nil {
		runtime.UnlockOSThread()
		refusedMu.Lock()
		refused = err
		refusedMu.Unlock()
		return false
	}
	l.P.ring, l.feeder = r, f
	for _, c := range l.Conns {
		if c.St == Open && c.Fd >= 0 {
			c.Out.armed = false
			if err := l.P.onRing(c.Fd, c.I, c.Gen, true); err != nil {
				l.ringErr = err
			}
		}
	}
	driver.AddRingRun()
	return true
}

// ringEnd cancels everything on the ring, handles what had arrived, closes
// the ring and puts the open connections back in the epoll set.
func (l *Loop) ringEnd() {
	r := l.P.ring
	err := r.cancelAll()
	l.P.ring = nil // from here on, a reopen registers with epoll
	if err == nil {
		l.reap(r)
	}
	r.close()
	l.feeder = nil
	runtime.UnlockOSThread()
	for _, c := range l.Conns {
		if c.St == Open && c.Fd >= 0 {
			if err := l.P.Add(c.Fd, unix.EPOLLIN, int32(c.I), int32(c.Gen)); err != nil && !errors.Is(err, unix.EEXIST) {
				l.H.WriteFailed(c, err) // fails and closes it, as a lost connection
			}
		}
	}
}

// ringWait is Wait and dispatch on the ring: one io_uring_enter submits
// what the pass queued and waits up to ms milliseconds, then every
// completion is handled. It yields the P as waitKernel does.
func (l *Loop) ringWait(ms int) error {
	p, r := &l.P, l.P.ring
	p.yieldBeforeWait()
	if err := r.enter(1, ms, true); err != nil {
		return err
	}
	p.yield = l.reap(r) == 0
	r.publishBufs()
	if err := l.ringErr; err != nil {
		l.ringErr = nil
		return err
	}
	return nil
}

// reap handles the completions in r's queue and releases them; n: how
// many.
func (l *Loop) reap(r *ring) (n int) {
	head, tail := r.ready()
	for ; head != tail; head++ {
		l.complete(r, r.at(head))
		n++
	}
	r.done(tail)
	return n
}

// onRing gives connection tag's socket fd (generation gen) a receive on
// the ring; out says it leaves the epoll set first (it was in it).
func (p *Poller) onRing(fd, tag int, gen uint32, out bool) error {
	if out {
		if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, fd, nil); err != nil && err != unix.ENOENT {
			return err
		}
	}
	return p.ring.recv(fd, ringData(kindRecv, tag, gen))
}

// complete handles one completion of ring r: a connection's bytes (to its
// Feeder), its failed send, or the epoll set's readiness (its events
// dispatched as a Wait's). A completion of a socket closed since (another
// generation) only gives its buffer back.
func (l *Loop) complete(r *ring, e cqe) {
	kind, tag, gen := e.userData>>56, int(uint32(e.userData)), uint32(e.userData>>32)&0xffffff
	more := e.flags&cqeFMore != 0
	if kind == kindPoll {
		if !more && e.res != -int32(unix.ECANCELED) && l.P.ring != nil {
			if err := r.pollIn(l.P.epfd, e.userData); err != nil {
				l.ringErr = err
			}
		}
		evs, err := l.P.Wait(0)
		if err != nil {
			l.ringErr = err
			return
		}
		l.dispatch(evs)
		return
	}
	if tag >= len(l.Conns) {
		return
	}
	c := l.Conns[tag]
	live := func() bool { return c.St == Open && c.Gen&0xffffff == gen }
	if kind == kindSend { // only failures post a completion
		if live() && e.res < 0 && e.res != -int32(unix.ECANCELED) {
			l.H.WriteFailed(c, unix.Errno(-e.res))
		}
		return
	}
	if e.flags&1 != 0 { // IORING_CQE_F_BUFFER: bytes in a provided buffer
		id, b := r.buf(e)
		if live() && e.res > 0 {
			l.feeder.Feed(c, b)
		}
		r.putBuf(id)
	} else if live() {
		switch {
		case e.res == 0:
			l.feeder.Feed(c, nil)
		case e.res == -int32(unix.ENOBUFS) || e.res == -int32(unix.ECANCELED):
		case e.res < 0:
			l.feeder.ReadFailed(c, unix.Errno(-e.res))
		}
	}
	if !more && e.res != 0 && e.res != -int32(unix.ECANCELED) && l.P.ring != nil && live() {
		// the multishot recv ended (buffers ran out, or the kernel
		// ended it): again
		if err := r.recv(c.Fd, e.userData); err != nil {
			l.ringErr = err
		}
	}
}

// CloseSocket closes a connection's socket: on a ring, its requests are
// cancelled first (a request holds the socket open, and the peer would see
// no FIN until it ends).
func (p *Poller) CloseSocket(fd int) {
	p.CancelSocket(fd)
	_ = unix.Close(fd)
}

// CancelSocket cancels a connection's requests on the ring (nothing on
// epoll), for a protocol that closes the socket itself (through the
// net.Conn it came from).
func (p *Poller) CancelSocket(fd int) {
	if p.ring != nil && fd >= 0 {
		_ = p.ring.cancelFd(fd)
	}
}
