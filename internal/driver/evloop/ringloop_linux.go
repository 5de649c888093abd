package evloop

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// A closed loop's Run goes on io_uring (uring_linux.go) instead of epoll
// when its protocol takes received bytes from the loop (Feeder: RESP's,
// PostgreSQL's and HTTP/1.1's loops, HTTP/1.1 over TLS too, whose
// ciphertext goes to its session), the Run blocks in the kernel (driver.SetBlockInKernel: benchrig's own process),
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
// the epoll set. (The Poller keeps the ring, ringpoll_linux.go: HTTP/2's
// loop, which is not a Loop, uses it too.)
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
	kindSent = 4 // a send whose success is posted too (Poller.RingSend)
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
	_, err := probeRing()
	return err
}

// RingCoalesces reports whether this process's rings can coalesce their
// waits (Poller.Coalesce: IORING_FEAT_MIN_TIMEOUT, Linux 6.13).
func RingCoalesces() bool {
	coalesces, err := probeRing()
	return err == nil && coalesces
}

// probeRing makes a small ring as a Run would, reports whether it can
// coalesce its waits, and closes it.
func probeRing() (coalesces bool, err error) {
	r, err := newRing(64, make([]byte, 2*4096), 2)
	if err != nil {
		return false, err
	}
	defer r.close()
	return r.minTimeout, nil
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
	if !ok || l.paced != nil || !l.P.RingBegin(&l.ringBufs, len(l.Conns)) {
		return false
	}
	l.feeder = f
	for _, c := range l.Conns {
		if c.St == Open && c.Fd >= 0 {
			if err := l.P.OnRing(c.Fd, c.I, c.Gen, &c.Out); err != nil {
				l.P.ringErr = err
			}
		}
	}
	return true
}

// ringEnd ends the ring (Poller.RingEnd) and puts the open connections
// back in the epoll set.
func (l *Loop) ringEnd() {
	l.P.RingEnd(loopRing{l})
	l.feeder = nil
	for _, c := range l.Conns {
		if c.St == Open && c.Fd >= 0 {
			if err := l.P.Add(c.Fd, unix.EPOLLIN, int32(c.I), int32(c.Gen)); err != nil && !errors.Is(err, unix.EEXIST) {
				l.H.WriteFailed(c, err) // fails and closes it, as a lost connection
			}
		}
	}
}

// loopRing is a Loop as its ring's RingUser: connection tag is
// l.Conns[tag], its bytes go to the Feeder, only a send's failure is
// posted (Poller.Flush), and the epoll set's events are dispatched.
type loopRing struct{ l *Loop }

func (u loopRing) RingConn(tag int, gen uint32) (int, bool) {
	if tag >= len(u.l.Conns) {
		return -1, false
	}
	c := u.l.Conns[tag]
	return c.Fd, c.St == Open && c.Gen&0xffffff == gen
}

func (u loopRing) RingFeed(tag int, b []byte)         { u.l.feeder.Feed(u.l.Conns[tag], b) }
func (u loopRing) RingReadFailed(tag int, err error)  { u.l.feeder.ReadFailed(u.l.Conns[tag], err) }
func (u loopRing) RingSent(tag int, _ int, err error) { u.l.H.WriteFailed(u.l.Conns[tag], err) }
func (u loopRing) RingEvents(evs []unix.EpollEvent)   { u.l.dispatch(evs) }
