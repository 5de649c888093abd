package evloop

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
)

// A Run on io_uring, as the Poller keeps it for any loop: Loop's
// (ringloop_linux.go), or a protocol's own, as HTTP/2's. The loop begins
// it (RingBegin), moves its open connections onto it (OnRing: each gets a
// multishot receive), sends on it (Flush, or RingSend), waits on it
// (RingWait: one io_uring_enter a pass, its completions handed to the
// loop's RingUser) and ends it (RingEnd), then puts its open connections
// back in the epoll set.

// RingUser is a loop whose Run is on the ring: the completions of its
// connections' requests come to it. A connection is its tag (an index)
// and the low 24 bits of its generation, as the loop gave them.
type RingUser interface {
	// RingConn is connection tag's socket, and whether it is open in
	// generation gen: a completion of a socket closed since is dropped.
	RingConn(tag int, gen uint32) (fd int, ok bool)
	// RingFeed is given what arrived on open tag (empty: the peer closed
	// the connection), RingReadFailed an error receiving on it.
	RingFeed(tag int, b []byte)
	RingReadFailed(tag int, err error)
	// RingSent is the end of a send on open tag: a failed Flush (err set),
	// or any RingSend's (n bytes sent, or err; unix.ECANCELED when the
	// ring ended before it did).
	RingSent(tag int, n int, err error)
	// RingEvents is the epoll set's events (the wake-up eventfd, a timer,
	// a connection not on the ring), as Wait returns them.
	RingEvents(evs []unix.EpollEvent)
}

// RingBegin puts the Run on a new ring, if its loop may use one (it
// blocks in the kernel, does not busy-poll, driver.IOUring allows it and
// the kernel has not refused it), and reports whether it did. bufs is the
// loop's memory for the ring's receive buffers, kept from Run to Run;
// conns its connection count. The Run's thread is locked to its goroutine
// until RingEnd (the ring is single-issuer). A refusal of the kernel is
// kept (RingRefused): the process's Runs stay on epoll from then on.
func (p *Poller) RingBegin(bufs *[]byte, conns int) bool {
	if !p.kernel || p.spin > 0 || !driver.IOUring() || RingRefused() != nil {
		return false
	}
	runtime.LockOSThread()
	if len(*bufs) != ringBufs*ringBufSize {
		*bufs = make([]byte, ringBufs*ringBufSize)
	}
	r, err := newRing(max(64, 2*conns+8), *bufs, ringBufs)
	if err == nil {
		err = r.pollIn(p.epfd, ringData(kindPoll, 0, 0))
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
	p.ring, p.ringErr, p.sends = r, nil, 0
	driver.AddRingRun()
	return true
}

// Ring reports whether the Run is on a ring.
func (p *Poller) Ring() bool { return p.ring != nil }

// OnRing moves open connection tag's socket fd (generation gen) from the
// epoll set onto the ring; its outbox out no longer has EPOLLOUT armed
// (what it holds is the loop's to send on the ring).
func (p *Poller) OnRing(fd, tag int, gen uint32, out *Outbox) error {
	out.armed = false
	return p.onRing(fd, tag, gen, true)
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

// RingSend queues a send of all of b on connection tag's socket fd, whose
// end, success or not, comes to the RingUser's RingSent: b must stay as it
// is until then, and a connection's sends must not overlap (one may be
// cancelled halfway).
func (p *Poller) RingSend(fd, tag int, gen uint32, b []byte) error {
	p.sends++
	return p.ring.send(fd, b, ringData(kindSent, tag, gen), false)
}

// A Run on the ring whose answers take long may wait a little for more of
// them before it handles any (IORING_FEAT_MIN_TIMEOUT, Linux 6.13): with
// busy connections in flight, the next wait asks for busy/2 completions
// (beyond those of its own sends), for at most 1/CoalesceShare of the
// answers' latency and never more than CoalesceMax, and then settles for
// one. An answer is handled (and its latency taken) at most that wait
// late: 1 % of the latency measured. It pays where a connection carries
// several requests at once, refilled as each ends (HTTP/2's streams):
// against a server at 100 % of its core that answers each small write
// with a small write, a loop handling each answer as it comes sends a
// request or two per write, and the waits let a connection's ended streams
// leave together. Loop's protocols, a batch per connection, do not call
// it: with PostgreSQL's 64 connections it only added the timer (21.7 µs of
// client CPU a request at 1 key against 18.3 without, 3 interleaved runs
// of bench/pg-peers.sh). Waits of a few µs gain little (HTTP/2 against
// nginx, 10 × 10 streams: 9 µs of client CPU a request with waits of a
// 200th of the latency, 6 with a 100th), yet a 10 µs floor switched the
// coalescing off and on as the latency crossed a millisecond (1.07×
// h2load against 1.39× without it, interleaved): there is none.
const (
	CoalesceShare = 100 // the wait is at most the latency ÷ CoalesceShare
	CoalesceMax   = 50 * time.Microsecond
)

// Coalesce sets the next RingWait's coalescing for busy connections with
// requests in flight and answers lat ns long on average (a moving
// average): nothing below 4 busy connections, or when driver.Coalesce
// says not to, or on a kernel without IORING_FEAT_MIN_TIMEOUT.
func (p *Poller) Coalesce(busy int, lat int64) {
	r := p.ring
	r.minWait = 0
	wait := min(time.Duration(lat/CoalesceShare), CoalesceMax).Truncate(time.Microsecond)
	if !r.minTimeout || busy < 4 || wait < time.Microsecond || !driver.Coalesce() {
		return
	}
	r.minWant, r.minWait = busy/2+p.sends, uint32(wait/time.Microsecond)
	if wait > p.coalesced {
		p.coalesced = wait
	}
}

// RingWait is Wait and dispatch on the ring: one io_uring_enter submits
// what the pass queued and waits up to ms milliseconds, then every
// completion goes to u. It yields the P as waitKernel does. A failure to
// queue on the ring since the last RingWait is returned.
func (p *Poller) RingWait(ms int, u RingUser) error {
	r := p.ring
	p.yieldBeforeWait()
	err := r.enter(1, ms, true)
	r.minWait, p.sends = 0, 0
	if err != nil {
		return err
	}
	p.yield = p.reap(r, u) == 0
	r.publishBufs()
	if err := p.ringErr; err != nil {
		p.ringErr = nil
		return err
	}
	return nil
}

// RingEnd cancels everything on the ring, hands what had arrived to u,
// closes the ring and unlocks the Run's thread. From the moment it is
// called the Run is on epoll again (a send, an Add, go there); the loop
// then puts its open connections back in the epoll set.
func (p *Poller) RingEnd(u RingUser) {
	r := p.ring
	err := r.cancelAll()
	p.ring = nil
	if err == nil {
		p.reap(r, u)
	}
	r.close()
	p.ringErr = nil
	if p.coalesced > 0 {
		driver.NoteCoalesce(p.coalesced)
		p.coalesced = 0
	}
	runtime.UnlockOSThread()
}

// reap hands the completions in r's queue to u and releases them; n: how
// many.
func (p *Poller) reap(r *ring, u RingUser) (n int) {
	head, tail := r.ready()
	for ; head != tail; head++ {
		p.complete(r, u, r.at(head))
		n++
	}
	r.done(tail)
	return n
}

// complete hands one completion of ring r to u: a connection's bytes, its
// send's end, or the epoll set's readiness (its events as a Wait's). A
// completion of a socket closed since (another generation) only gives its
// buffer back.
func (p *Poller) complete(r *ring, u RingUser, e cqe) {
	kind, tag, gen := e.userData>>56, int(uint32(e.userData)), uint32(e.userData>>32)&0xffffff
	more := e.flags&cqeFMore != 0
	cancelled := e.res == -int32(unix.ECANCELED)
	if kind == kindPoll {
		if !more && !cancelled && p.ring != nil {
			if err := r.pollIn(p.epfd, e.userData); err != nil {
				p.ringErr = err
			}
		}
		evs, err := p.Wait(0)
		if err != nil {
			p.ringErr = err
			return
		}
		u.RingEvents(evs)
		return
	}
	_, live := u.RingConn(tag, gen)
	switch kind {
	case kindSend: // only failures post a completion
		if live && e.res < 0 && !cancelled {
			u.RingSent(tag, 0, unix.Errno(-e.res))
		}
		return
	case kindSent:
		if live {
			if e.res < 0 {
				u.RingSent(tag, 0, unix.Errno(-e.res))
			} else {
				u.RingSent(tag, int(e.res), nil)
			}
		}
		return
	}
	if e.flags&1 != 0 { // IORING_CQE_F_BUFFER: bytes in a provided buffer
		id, b := r.buf(e)
		if live && e.res > 0 {
			u.RingFeed(tag, b)
		}
		r.putBuf(id)
	} else if live {
		switch {
		case e.res == 0:
			u.RingFeed(tag, nil)
		case e.res == -int32(unix.ENOBUFS) || cancelled:
		case e.res < 0:
			u.RingReadFailed(tag, unix.Errno(-e.res))
		}
	}
	if !more && e.res != 0 && !cancelled && p.ring != nil {
		// the multishot recv ended (buffers ran out, or the kernel
		// ended it): again, if the connection is still open
		if fd, ok := u.RingConn(tag, gen); ok {
			if err := r.recv(fd, e.userData); err != nil {
				p.ringErr = err
			}
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
