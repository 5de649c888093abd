//go:build linux

package http

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// h2lc is one HTTP/2 connection of an h2loop.
type h2lc struct {
	i       int
	fd      int
	gen     uint32
	st      evloop.State
	until   int64 // reopen time (Backoff)
	backoff driver.Backoff
	reopen  bool   // count a reconnect when the reopen completes
	cause   string // why the last socket ended
	queued  bool
	out     evloop.Outbox
	tc      *tls.Conn // over TLS, on tp (loop_tls_linux.go)
	tp      *tlsPipe

	fr        *http2.Framer // writes frames into wbuf; reads the frames fill hands it
	src       frameSrc
	wbuf      []byte // frames of this pass, not yet in the outbox
	xbuf      []byte // with an Exchange: the body being sent
	obuf      []byte // the outbox's array
	obuf2     []byte // on a ring: the other array, which a send in flight holds
	sending   bool   // on a ring: a send is in flight (h2ring_linux.go)
	h2headers        // the request header blocks
	dec       headerDecoder
	hs        headerState // the header block being read (stream: a slot)
	hsOpen    bool        // a HEADERS frame without END_HEADERS: CONTINUATION must follow
	hsID      uint32
	pend      []byte // a partial frame

	peerMaxStreams uint32
	peerInitWindow int64
	peerMaxFrame   uint32
	sendWindow     int64
	recv           int64 // received since the last connection WINDOW_UPDATE
	nextID         uint32
	goaway         bool   // no new stream: GOAWAY received, or stream IDs used up
	goCause        string // the reconnect's cause then
	used           bool   // a stream ended on this socket
	free           int    // at a rate: streams free to start (h2paced_linux.go)

	slots  []h2slot // streams on the wire (id 0: a free slot)
	byID   []int32  // slot of stream id at (id/2) mod len: a hint, checked
	resend []h2slot // requests to send (again) on the next socket, or when the window opens
}

// h2slot is one stream, or a request waiting for one.
type h2slot struct {
	id    uint32
	k     int // request index
	op    uint8
	seq   uint64 // the request's sequence number (an Exchange's body)
	sent  int64  // first send
	again bool   // sent once before, on another connection
	stale bool   // reported Outstanding at the window's end
	got   bool   // a frame of it arrived
	recv  int64  // DATA bytes since its last WINDOW_UPDATE
	resp  response
}

// frameSrc hands the Framer one frame's bytes.
type frameSrc struct{ b []byte }

func (s *frameSrc) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

// frameSink appends the Framer's frames to the connection's pass buffer.
type frameSink struct{ c *h2lc }

func (s frameSink) Write(p []byte) (int, error) {
	s.c.wbuf = append(s.c.wbuf, p...)
	return len(p), nil
}

// oldest is the first send of c's oldest stream in flight (not stale), 0
// when none.
func (c *h2lc) oldest() int64 {
	var t int64
	for i := range c.slots {
		if s := &c.slots[i]; s.id != 0 && !s.stale && (t == 0 || s.sent < t) {
			t = s.sent
		}
	}
	return t
}

// active and stale count c's streams on the wire.
func (c *h2lc) active() (n int) {
	for i := range c.slots {
		if c.slots[i].id != 0 && !c.slots[i].stale {
			n++
		}
	}
	return n
}

func (c *h2lc) stale() (n int) {
	for i := range c.slots {
		if c.slots[i].id != 0 && c.slots[i].stale {
			n++
		}
	}
	return n
}

// open connects c, blocking: TCP, TLS (ALPN h2), the preface and the
// server's SETTINGS. The loop's other connections wait for it (at open,
// and on a reconnect: a round trip or two, sessions resumed over TLS).
func (l *h2loop) open(c *h2lc) error {
	fd, err := unix.Socket(l.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	c.fd, c.gen, c.st = fd, c.gen+1, evloop.Connecting
	tp := &tlsPipe{fd: fd, blocking: true, until: time.Now().Add(time.Duration(l.dial))}
	if err := unix.Connect(fd, l.sa); errors.Is(err, unix.EINPROGRESS) {
		if err = tp.wait(unix.POLLOUT); err == nil {
			var v int
			if v, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR); err == nil && v != 0 {
				err = unix.Errno(v)
			}
		}
		if err != nil {
			l.drop(c)
			return fmt.Errorf("connect: %w", err)
		}
	} else if err != nil {
		l.drop(c)
		return fmt.Errorf("connect: %w", err)
	}
	var rw io.ReadWriter = tp
	if s := l.d.w.tls; s != nil {
		cfg := s.cfg.Clone()
		cfg.NextProtos = []string{ProtoH2}
		tc := tls.Client(tp, cfg)
		ctx, cancel := context.WithDeadline(context.Background(), tp.until)
		t0 := time.Now()
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			l.drop(c)
			if noALPN(err) {
				return fmt.Errorf("the server does not offer HTTP/2 over TLS (it refused ALPN h2): drop --http2 for HTTP/1.1")
			}
			return handshakeError(err, cfg.ServerName)
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != ProtoH2 {
			l.drop(c)
			return fmt.Errorf("the server did not agree to HTTP/2 over TLS (ALPN chose %q): drop --http2 for HTTP/1.1", p)
		}
		s.record(tc.ConnectionState(), time.Since(t0))
		c.tc, c.tp, rw = tc, tp, tc
	}
	if err := l.handshakeH2(c, rw); err != nil {
		l.drop(c)
		return err
	}
	tp.blocking = false
	if err := l.P.Add(fd, unix.EPOLLIN, int32(c.i), int32(c.gen)); err != nil {
		l.drop(c)
		return err
	}
	c.st = evloop.Open
	return nil
}

// handshakeH2 exchanges the preface and settings on rw (blocking), and makes
// c's HTTP/2 state for the new socket.
func (l *h2loop) handshakeH2(c *h2lc, rw io.ReadWriter) error {
	c.peerMaxStreams, c.peerInitWindow, c.peerMaxFrame = 1<<32-1, 65535, h2DefaultFrame
	c.sendWindow, c.recv, c.nextID, c.goaway, c.used, c.hsOpen = 65535, 0, 1, false, false, false
	c.wbuf = append(c.wbuf[:0], http2.ClientPreface...)
	c.fr = http2.NewFramer(frameSink{c}, &c.src)
	c.fr.SetReuseFrames()
	c.resetHeaders()
	if l.d.x == nil {
		// :status alone, without x/net's strings and maps (statusDecoder)
		c.dec = newStatusDecoder(4096, maxHeaderBytes, &c.hs.status)
	} else {
		dec := hpack.NewDecoder(4096, func(f hpack.HeaderField) { l.emitField(c, f) })
		dec.SetMaxStringLength(maxHeaderBytes)
		c.dec = dec
	}
	_ = c.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2Window},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: maxHeaderBytes})
	_ = c.fr.WriteWindowUpdate(0, h2Window-65535)
	if _, err := rw.Write(c.wbuf); err != nil {
		return fmt.Errorf("HTTP/2 preface: %w", err)
	}
	c.wbuf = c.wbuf[:0]
	rf := http2.NewFramer(io.Discard, rw)
	f, err := rf.ReadFrame()
	if err != nil {
		return fmt.Errorf("the server did not answer in HTTP/2 (no SETTINGS frame: %v); is it an HTTP/2 server?", err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		return fmt.Errorf("the server did not answer in HTTP/2 (first frame %s, want SETTINGS)", f.Header().Type)
	}
	c.settings(sf)
	_ = c.fr.WriteSettingsAck()
	_, err = rw.Write(c.wbuf)
	c.wbuf = c.wbuf[:0]
	return err
}

// settings applies the server's SETTINGS.
func (c *h2lc) settings(sf *http2.SettingsFrame) {
	_ = sf.ForeachSetting(func(s http2.Setting) error {
		switch s.ID {
		case http2.SettingMaxConcurrentStreams:
			c.peerMaxStreams = s.Val
		case http2.SettingInitialWindowSize:
			c.peerInitWindow = int64(s.Val)
		case http2.SettingMaxFrameSize:
			c.peerMaxFrame = s.Val
		case http2.SettingHeaderTableSize:
			c.tableSize(s.Val)
		}
		return nil
	})
}

// emitStatus keeps :status, the first field, then stops emitting (see
// h2conn.emitStatus).
func (c *h2lc) emitStatus(f hpack.HeaderField) {
	if f.Name == ":status" {
		c.hs.status = f.Value
	}
	c.dec.SetEmitEnabled(false)
}

// emitField is the decoder's emit function with an Exchange: :status,
// and the fields the exchange names, of the stream whose block it is.
func (l *h2loop) emitField(c *h2lc, f hpack.HeaderField) {
	if f.Name == ":status" {
		c.hs.status = f.Value
	}
	l.d.field(&c.slots[c.hs.stream].resp, f)
}

// connect reopens c during a Run and re-sends what its old socket left.
func (l *h2loop) connect(c *h2lc, now int64) {
	if err := l.open(c); err != nil {
		l.connectFailed(c, err, now)
		return
	}
	if c.reopen {
		c.reopen = false
		l.w.Reconnected(c.cause, len(c.resend))
		c.cause = ""
	}
	l.queue(c)
}

// connectFailed fails the requests waiting for c's new socket, or claims
// one request to fail (as the engine fails the batch of a goroutine's
// failed reopen), and pauses.
func (l *h2loop) connectFailed(c *h2lc, err error, now int64) {
	c.cause = driver.CauseError
	o := &l.out
	*o = driver.Outcome{Class: driver.Error, Done: now, Msg: "connect: " + driver.Msg(err)}
	if len(c.resend) > 0 {
		for i := range c.resend {
			o.Op = c.resend[i].op
			l.inflight--
			l.w.Record(o, c.resend[i].sent)
		}
		c.resend = c.resend[:0]
	} else if l.stopping || (l.deadline != 0 && now >= l.deadline) {
		l.stopping = true
		return
	} else if seq, k := l.w.Claim(1); k > 0 {
		o.Op = l.d.t.op(l.d.t.pick(seq))
		l.w.Record(o, now)
	} else {
		l.stopping = true
		return
	}
	l.pause(c, now)
}

// drop closes c's socket; its streams' state goes with it (the caller
// accounts for them first).
func (l *h2loop) drop(c *h2lc) {
	if c.fd >= 0 {
		l.P.CloseSocket(c.fd) // on a ring, its requests cancelled first
	}
	c.fd, c.st, c.pend, c.wbuf, c.sending = -1, evloop.Down, c.pend[:0], c.wbuf[:0], false
	c.tc, c.tp = nil, nil
	c.out.Reset()
	for i := range c.slots {
		c.slots[i].id = 0
	}
}
