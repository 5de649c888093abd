//go:build linux

package http

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// HTTP/1.1 over TLS on the event loop. crypto/tls has no non-blocking
// API, but a tls.Conn keeps a read error only when it is not Temporary():
// over a tlsPipe, an in-memory conn the loop feeds with the socket's
// ciphertext and that answers "would block" as a temporary error, the
// loop reads plaintext without blocking, and writes only append
// ciphertext to the connection's outbox. The handshake cannot be resumed
// that way (its error is sticky): it is made blocking, right after the
// connect (at open, all connections in turn; on a reconnect the loop's
// other connections wait for that round trip).

// errWouldBlock is a tlsPipe's "no ciphertext yet".
var errWouldBlock error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "would block" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

// tlsPipe is the net.Conn under a loop connection's tls.Conn.
type tlsPipe struct {
	fd       int
	blocking bool      // during the handshake: read and write the socket, waiting
	until    time.Time // the handshake's deadline
	in       []byte    // ciphertext read, not yet consumed by tls
	ibuf     []byte    // in's array, reused once tls consumed it all
	eof      bool      // the socket ended
	out      []byte    // ciphertext written by tls, for the outbox
	sbuf     []byte    // seal's buffer, reused per batch
}

var _ net.Conn = (*tlsPipe)(nil)

func (p *tlsPipe) Read(b []byte) (int, error) {
	for len(p.in) == 0 {
		if p.eof {
			return 0, io.EOF
		}
		if !p.blocking {
			return 0, errWouldBlock
		}
		n, err := evloop.ReadNonblock(p.fd, b)
		switch {
		case err == unix.EAGAIN:
			if err := p.wait(unix.POLLIN); err != nil {
				return 0, err
			}
			continue
		case err != nil:
			return 0, err
		case n == 0:
			p.eof = true
			continue
		}
		return n, nil
	}
	n := copy(b, p.in)
	p.in = p.in[n:]
	return n, nil
}

// feed appends ciphertext read from the socket for tls to read, in the
// same array every time (Read consumes in from its front: appending to
// what it left would reallocate, an allocation per read).
func (p *tlsPipe) feed(b []byte) {
	if len(p.in) == 0 {
		p.in = p.ibuf[:0]
	}
	p.in = append(p.in, b...)
	if cap(p.in) > cap(p.ibuf) {
		p.ibuf = p.in[:0]
	}
}

// arrived feeds what the ring received (empty: the socket ended).
func (p *tlsPipe) arrived(b []byte) {
	if len(b) == 0 {
		p.eof = true
	}
	p.feed(b)
}

func (p *tlsPipe) Write(b []byte) (int, error) {
	if !p.blocking {
		p.out = append(p.out, b...)
		return len(b), nil
	}
	rest := b
	for len(rest) > 0 {
		r, err := evloop.WriteNonblock(p.fd, rest)
		if err != nil {
			return len(b) - len(r), err
		}
		if rest = r; len(rest) > 0 {
			if err := p.wait(unix.POLLOUT); err != nil {
				return len(b) - len(rest), err
			}
		}
	}
	return len(b), nil
}

// wait polls the socket until it is ready for ev or the handshake's
// deadline passes.
func (p *tlsPipe) wait(ev int16) error {
	left := time.Until(p.until)
	if left <= 0 {
		return errRequestTimeout
	}
	fds := []unix.PollFd{{Fd: int32(p.fd), Events: ev}}
	_, err := unix.Poll(fds, int(left/time.Millisecond)+1)
	if err == unix.EINTR {
		return nil
	}
	return err
}

func (p *tlsPipe) Close() error                     { return nil } // the loop closes the socket
func (p *tlsPipe) LocalAddr() net.Addr              { return pipeAddr{} }
func (p *tlsPipe) RemoteAddr() net.Addr             { return pipeAddr{} }
func (p *tlsPipe) SetDeadline(time.Time) error      { return nil }
func (p *tlsPipe) SetReadDeadline(time.Time) error  { return nil }
func (p *tlsPipe) SetWriteDeadline(time.Time) error { return nil }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "tcp" }
func (pipeAddr) String() string  { return "loop" }

// handshake makes c's TLS handshake on its connected socket, blocking.
func (l *loop) handshake(c *lconn) error {
	s := l.d.w.tls
	c.tp = &tlsPipe{fd: c.Fd, blocking: true, until: time.Now().Add(time.Duration(l.dial))}
	cfg := s.cfg.Clone()
	cfg.NextProtos = []string{ProtoHTTP1}
	c.tc = tls.Client(c.tp, cfg)
	ctx, cancel := context.WithDeadline(context.Background(), c.tp.until)
	defer cancel()
	t0 := time.Now()
	if err := c.tc.HandshakeContext(ctx); err != nil {
		c.tc, c.tp = nil, nil
		return handshakeError(err, cfg.ServerName)
	}
	s.record(c.tc.ConnectionState(), time.Since(t0))
	c.tp.blocking = false
	return nil
}

// seal encrypts the plaintext pending in c's outbox (a batch's requests).
func (l *loop) seal(c *lconn) error {
	p := c.tp
	// what tls wrote while reading and could not be flushed then (a key
	// update's answer, in its own array) goes first
	p.out = append(p.sbuf[:0], p.out...)
	_, err := c.tc.Write(c.Out.Pending)
	p.sbuf, c.Out.Pending, p.out = p.out, p.out, nil
	return err
}

// readTLS reads what arrived on c's socket, decrypts it and completes
// every whole response in it (on io_uring, Feed hands decrypt what
// arrived). A TLS record with no plaintext (a session ticket, a key
// update) is no byte of a response: on an idle connection it is not
// unsolicited.
func (l *loop) readTLS(c *lconn) {
	n, err := evloop.ReadNonblock(c.Fd, l.cbuf)
	switch {
	case err == unix.EAGAIN:
		return
	case err != nil:
		l.lost(c, err)
		return
	case n == 0:
		c.tp.eof = true
	}
	c.tp.feed(l.cbuf[:n])
	l.decrypt(c)
}

// decrypt decrypts the ciphertext fed to c's tlsPipe and completes every
// whole response in it.
func (l *loop) decrypt(c *lconn) {
	tc := c.tc
	for c.tc == tc {
		m := copy(l.buf, c.pend)
		k, err := tc.Read(l.buf[m:])
		if k > 0 {
			if !l.consume(c, l.buf[:m+k], driver.Now()) || c.tc != tc {
				return
			}
		}
		if err != nil {
			var wb wouldBlock
			switch {
			case errors.As(err, &wb):
				l.flushTLS(c)
			case errors.Is(err, io.EOF):
				l.eof(c, driver.Now())
			default:
				l.lost(c, err)
			}
			return
		}
	}
}

// flushTLS writes what tls wrote while reading (a key update's answer).
func (l *loop) flushTLS(c *lconn) {
	if len(c.tp.out) == 0 || len(c.Out.Pending) > 0 {
		return
	}
	c.Out.Pending, c.tp.out = c.tp.out, nil
	l.write(c)
}
