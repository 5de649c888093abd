// Package evloop is what benchrig's event loops (the HTTP and PostgreSQL
// drivers' driver.Loop implementations) share: an epoll set, an eventfd that
// wakes epoll_wait from another goroutine, the lifecycle of one Run at a time
// with Close allowed at any moment, and non-blocking writes.
//
//	var p evloop.Poller
//	if err := p.Init(64, closeAllSockets); err != nil { … }
//	if err := p.Begin(); err != nil { return err } // evloop.ErrClosed
//	defer p.End()
//	for !p.Cancelled() { evs, err := p.Wait(-1); … }
package evloop

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
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
	closeConns func()

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
	p.epfd, p.evfd, p.closeConns = -1, -1, closeConns
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
	return nil
}

// Add registers fd for events; tag and gen come back in each event's Fd and
// Pad fields (a connection index and its generation, so a loop can ignore
// events of a socket it closed earlier in the same pass).
func (p *Poller) Add(fd int, events uint32, tag, gen int32) error {
	return unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: events, Fd: tag, Pad: gen})
}

// Mod changes the events fd is registered for.
func (p *Poller) Mod(fd int, events uint32, tag, gen int32) error {
	return unix.EpollCtl(p.epfd, unix.EPOLL_CTL_MOD, fd, &unix.EpollEvent{Events: events, Fd: tag, Pad: gen})
}

// Wait waits up to ms milliseconds (-1: no limit) and returns the events; an
// interrupted wait returns none and no error.
func (p *Poller) Wait(ms int) ([]unix.EpollEvent, error) {
	k, err := unix.EpollWait(p.epfd, p.events, ms)
	if err != nil {
		if errors.Is(err, unix.EINTR) {
			return nil, nil
		}
		return nil, fmt.Errorf("epoll_wait: %w", err)
	}
	return p.events[:k], nil
}

// Begin marks a Run in progress, or returns ErrClosed.
func (p *Poller) Begin() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	p.running = true
	return nil
}

// End marks the Run finished and, if Close came during it, closes the
// descriptors.
func (p *Poller) End() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = false
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
	if p.epfd >= 0 {
		_ = unix.Close(p.epfd)
	}
}

// WriteNonblock writes b to a non-blocking fd until it is all written or
// the socket buffer is full. It returns what is left to write (nil when
// done), and an error other than EAGAIN.
func WriteNonblock(fd int, b []byte) ([]byte, error) {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return b, nil
		case err != nil:
			return b, err
		}
		b = b[n:]
	}
	return nil, nil
}
