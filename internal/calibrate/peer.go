package calibrate

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrTerminate, returned by a Responder, ends the connection quietly
// (the client said goodbye).
var ErrTerminate = errors.New("terminate")

// Responder is a null peer's protocol: it is given what arrived on a
// connection since the last call (pending, unparsed bytes first) and
// returns the bytes to send back and how many input bytes it consumed.
// It keeps per-connection state in the value it was made with.
type Responder interface {
	Respond(in []byte) (out []byte, used int, err error)
}

// peer is an in-process null server on 127.0.0.1: each connection is
// served by a goroutine locked to an OS thread of its own, reading and
// writing its socket with blocking system calls (no netpoller), so the
// peer's CPU is exactly the CPU of those threads, read with
// getrusage(RUSAGE_THREAD) when each connection ends, and can be taken
// out of the process's.
type peer struct {
	ln      *net.TCPListener
	newResp func() Responder

	mu    sync.Mutex
	cpu   time.Duration // threads of finished connections
	fds   map[int]bool  // live connections' sockets (to shut down on close)
	first error         // the first protocol error of a connection
	wg    sync.WaitGroup
}

// startPeer listens on a free loopback port.
func startPeer(newResp func() Responder) (*peer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("null peer: %w", err)
	}
	p := &peer{ln: ln.(*net.TCPListener), newResp: newResp, fds: map[int]bool{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// addr is the peer's host:port.
func (p *peer) addr() string { return p.ln.Addr().String() }

func (p *peer) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.AcceptTCP()
		if err != nil {
			return
		}
		f, err := c.File() // a dup of the socket: Fd() below makes it blocking
		c.Close()
		if err != nil {
			continue
		}
		p.wg.Add(1)
		go p.serve(f.Fd(), f)
	}
}

// serve answers one connection until the client closes it.
func (p *peer) serve(ufd uintptr, keep interface{ Close() error }) {
	defer p.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// The thread may have run other goroutines before it was locked to
	// this one: its CPU so far is not the peer's.
	before := threadCPU()
	fd := int(ufd)
	p.mu.Lock()
	p.fds[fd] = true
	p.mu.Unlock()
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	err := p.loop(fd, p.newResp())
	used := threadCPU() - before
	p.mu.Lock()
	delete(p.fds, fd)
	p.cpu += used
	if err != nil && p.first == nil {
		p.first = err
	}
	p.mu.Unlock()
	keep.Close()
}

// loop reads requests and writes the responder's answers.
func (p *peer) loop(fd int, r Responder) error {
	buf := make([]byte, 64<<10)
	n := 0
	for {
		k, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || k == 0 {
			return nil // the client went away, or close shut us down
		}
		n += k
		out, used, err := r.Respond(buf[:n])
		if errors.Is(err, ErrTerminate) {
			return nil
		}
		if err != nil {
			return err
		}
		n = copy(buf, buf[used:n])
		if n == len(buf) {
			return errors.New("null peer: a request larger than 64 KiB")
		}
		for len(out) > 0 {
			w, err := syscall.Write(fd, out)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				return nil
			}
			out = out[w:]
		}
	}
}

// close stops accepting, shuts every live connection down, waits for their
// goroutines and returns the CPU the peer's threads used and the first
// protocol error.
func (p *peer) close() (time.Duration, error) {
	p.ln.Close()
	p.mu.Lock()
	for fd := range p.fds {
		_ = unix.Shutdown(fd, unix.SHUT_RDWR)
	}
	p.mu.Unlock()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cpu, p.first
}

// threadCPU is the calling thread's user and system CPU so far.
func threadCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
