package calibrate

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// ErrTerminate, returned by a Responder, ends the connection quietly
// (the client said goodbye).
var ErrTerminate = errors.New("terminate")

// Responder is a null peer's protocol: it is given what arrived on a
// connection since the last call (pending, unparsed bytes first) and
// returns the bytes to send back and how many input bytes it consumed.
// It keeps per-connection state in the value it was made with. The bytes
// it returns are sent before it is called again, so it may reuse them.
type Responder interface {
	Respond(in []byte) (out []byte, used int, err error)
}

// maxRequest bounds what a connection may hold unanswered.
const maxRequest = 64 << 10

// pollYield: a polling loop yields its P every that many empty polls.
const pollYield = 64

// server is the null peer of the child process: a few event loops, each an
// OS thread of its own waiting in epoll_wait (level-triggered) over its
// share of the connections, which it reads and answers with non-blocking
// system calls; the first loop also accepts, and hands connections out in
// turn. Nothing else runs in the process but the control socket's read.
//
// A loop reads every connection epoll_wait found ready before it writes
// any answer, then writes them all, as an event-loop server does (Redis,
// nginx): the client finds the answers of one round ready together, not
// one per wake-up, as it would from such a server.
//
// On CPUs of its own (poll), a loop that serves connections polls
// (epoll_wait with a zero timeout) instead of sleeping: the client's
// requests never have to wake it, a wake-up its sender pays for (an
// inter-processor interrupt; on a virtual machine, an exit to the
// hypervisor), as none does against a server busy with other requests.
// Sharing the client's CPUs, or without connections, a loop sleeps in
// epoll_wait.
type server struct {
	ln      int
	poll    bool // loops with connections poll rather than sleep
	loops   []*loop
	next    int // the loop the next connection goes to (first loop only)
	newResp func() Responder
	report  func(error)
}

// loop is one event loop and the connections it serves.
type loop struct {
	ep    int
	mu    sync.Mutex // conns: the first loop adds, the owner removes
	conns map[int]*conn
	live  atomic.Int32 // len(conns)
}

// conn is one client connection.
type conn struct {
	fd  int
	r   Responder
	in  []byte // received, not yet consumed
	out []byte // answers not yet sent
}

// listenLoopback opens a non-blocking listening socket on a free loopback
// port.
func listenLoopback() (fd int, addr string, err error) {
	fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, "", fmt.Errorf("socket: %w", err)
	}
	sa := &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if err = unix.Bind(fd, sa); err == nil {
		err = unix.Listen(fd, 4096)
	}
	var got unix.Sockaddr
	if err == nil {
		got, err = unix.Getsockname(fd)
	}
	in4, ok := got.(*unix.SockaddrInet4)
	if err != nil || !ok {
		unix.Close(fd)
		return -1, "", fmt.Errorf("listen on 127.0.0.1: %v", err)
	}
	return fd, fmt.Sprintf("127.0.0.1:%d", in4.Port), nil
}

// newServer makes n event loops over the listening socket ln.
func newServer(ln, n int, poll bool, newResp func() Responder, report func(error)) (*server, error) {
	s := &server{ln: ln, poll: poll, newResp: newResp, report: report}
	for range n {
		ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return nil, fmt.Errorf("epoll_create1: %w", err)
		}
		s.loops = append(s.loops, &loop{ep: ep, conns: map[int]*conn{}})
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(ln)}
	if err := unix.EpollCtl(s.loops[0].ep, unix.EPOLL_CTL_ADD, ln, &ev); err != nil {
		return nil, fmt.Errorf("epoll_ctl: %w", err)
	}
	return s, nil
}

// start runs each loop on a goroutine locked to an OS thread of its own.
func (s *server) start() {
	for _, l := range s.loops {
		go s.run(l)
	}
}

// run is one event loop; it returns only if epoll_wait fails.
func (s *server) run(l *loop) {
	runtime.LockOSThread()
	events := make([]unix.EpollEvent, 256)
	buf := make([]byte, maxRequest)
	var answered []*conn
	idle := 0
	for {
		wait := -1
		if s.poll && l.live.Load() > 0 {
			wait = 0
		}
		n, err := epollWait(l.ep, events, wait)
		if err == unix.EINTR || (err == nil && n == 0) {
			// Polling: now and then let the process's other goroutines
			// (the control socket's read, the collector) have the P.
			if idle++; idle%pollYield == 0 {
				runtime.Gosched()
			}
			continue
		}
		if err != nil {
			s.report(fmt.Errorf("null peer: epoll_wait: %w", err))
			return
		}
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			if fd == s.ln {
				s.accept()
				continue
			}
			l.mu.Lock()
			c := l.conns[fd]
			l.mu.Unlock()
			if c == nil {
				continue
			}
			if ev.Events&unix.EPOLLOUT != 0 {
				s.send(l, c, true)
			} else if ev.Events&(unix.EPOLLIN|unix.EPOLLHUP|unix.EPOLLERR) != 0 && s.read(l, c, buf) {
				answered = append(answered, c)
			}
		}
		for i, c := range answered {
			s.send(l, c, false)
			answered[i] = nil
		}
		answered = answered[:0]
	}
}

// epollWait is epoll_wait; a poll (wait 0) is a raw system call
// (evloop.RawEpollWait), as are the reads and writes on the non-blocking
// sockets (evloop.ReadNonblock, WriteNonblock): they never block, and the
// runtime's entry and exit of a system call would be most of the peer's
// own work per request. A wait that may block goes through the runtime.
func epollWait(ep int, events []unix.EpollEvent, wait int) (int, error) {
	if wait != 0 {
		return unix.EpollWait(ep, events, wait)
	}
	n, errno := evloop.RawEpollWait(ep, events, 0)
	if errno != 0 {
		return 0, errno
	}
	return n, nil
}

// accept takes every pending connection and gives each to the next loop.
func (s *server) accept() {
	for {
		fd, _, err := unix.Accept4(s.ln, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err == unix.EINTR || err == unix.ECONNABORTED {
			continue
		}
		if err != nil {
			if err != unix.EAGAIN {
				s.report(fmt.Errorf("null peer: accept: %w", err))
			}
			return
		}
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		l := s.loops[s.next%len(s.loops)]
		s.next++
		c := &conn{fd: fd, r: s.newResp()}
		l.mu.Lock()
		l.conns[fd] = c
		l.live.Store(int32(len(l.conns)))
		l.mu.Unlock()
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
		if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			s.report(fmt.Errorf("null peer: epoll_ctl: %w", err))
			s.drop(l, c)
		}
	}
}

// read reads what arrived on c and keeps its answer in c.out; it says
// whether there is one to send.
func (s *server) read(l *loop, c *conn, buf []byte) bool {
	k, err := evloop.ReadNonblock(c.fd, buf[:maxRequest-len(c.in)])
	if err == unix.EAGAIN {
		return false
	}
	if err != nil || k == 0 {
		s.drop(l, c) // the client went away
		return false
	}
	data := buf[:k]
	if len(c.in) > 0 {
		c.in = append(c.in, data...)
		data = c.in
	}
	out, used, err := c.r.Respond(data)
	if errors.Is(err, ErrTerminate) {
		s.drop(l, c)
		return false
	}
	if err != nil {
		s.report(err)
		s.drop(l, c)
		return false
	}
	// What is left is kept, unless it is c.in itself, already in place.
	rest := data[used:]
	if len(c.in) > 0 {
		c.in = c.in[:copy(c.in, rest)]
	} else {
		c.in = append(c.in[:0], rest...)
	}
	if len(c.in) >= maxRequest {
		s.report(errors.New("null peer: a request larger than 64 KiB"))
		s.drop(l, c)
		return false
	}
	c.out = append(c.out[:0], out...) // the Responder may reuse out
	return len(c.out) > 0
}

// send writes c.out. What the socket does not take waits for EPOLLOUT,
// and the connection is not read meanwhile; waited says this is that
// EPOLLOUT, so that once all is sent the connection is read again.
func (s *server) send(l *loop, c *conn, waited bool) {
	rest, err := evloop.WriteNonblock(c.fd, c.out)
	if err != nil {
		s.drop(l, c)
		return
	}
	if rest != nil { // the socket is full: the rest waits for EPOLLOUT
		c.out = c.out[:copy(c.out, rest)]
		if !waited && s.watch(l, c, unix.EPOLLOUT) != nil {
			s.drop(l, c)
		}
		return
	}
	c.out = c.out[:0]
	if waited && s.watch(l, c, unix.EPOLLIN) != nil {
		s.drop(l, c)
	}
}

// watch sets the event c's loop waits for on it.
func (s *server) watch(l *loop, c *conn, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(c.fd)}
	return unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, c.fd, &ev)
}

// drop closes a connection (which takes it out of its epoll set).
func (s *server) drop(l *loop, c *conn) {
	l.mu.Lock()
	delete(l.conns, c.fd)
	l.live.Store(int32(len(l.conns)))
	l.mu.Unlock()
	unix.Close(c.fd)
}
