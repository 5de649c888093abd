package http

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/benchrig/benchrig/internal/driver"
)

// HTTP/2 flow control: benchrig opens its receive windows wide at once
// (the connection's and each stream's to 1 GiB, the protocol allowing up
// to 2³¹−1) so that the server is never throttled by the client, and
// hands the consumed bytes back once half a window is used.
const (
	h2Window       = 1 << 30
	h2Refill       = h2Window / 2
	h2DefaultFrame = 16384 // SETTINGS_MAX_FRAME_SIZE until the server says
	h2MaxStreamID  = 1<<31 - 1
)

// CauseGoaway is the reconnect cause of an HTTP/2 server's GOAWAY: the
// streams it did not process are sent again on a new connection (RFC 9113
// §6.8 says they were not acted upon).
const CauseGoaway = "server sent GOAWAY"

// Errors of an HTTP/2 connection, counted by message.
var (
	errH2Unsolicited = errors.New("HTTP/2 frame for a stream nobody opened")
	errH2Push        = errors.New("HTTP/2 PUSH_PROMISE although push is disabled")
	errH2NoStatus    = fmt.Errorf("%w: HTTP/2 DATA before the response's headers", errMalformed)
)

// h2conn is one HTTP/2 connection (over TLS, or h2c). Do opens one stream
// per request, all written at once, and reads frames until every stream
// ended: with len(reqs) = N, N streams are in flight (h2load's -m).
type h2conn struct {
	d    *Driver
	nc   net.Conn
	bw   *bufio.Writer
	br   *bufio.Reader
	fr   *http2.Framer
	dec  *hpack.Decoder
	hs   headerState // the header block being read
	once sync.Once

	// the server's settings
	peerMaxStreams uint32
	peerInitWindow int64
	peerMaxFrame   uint32
	sendWindow     int64 // the connection's send window

	nextID   uint32
	recv     int64 // bytes received since the last connection WINDOW_UPDATE
	used     bool
	goaway   bool
	goCode   http2.ErrCode
	deadline time.Time

	h2headers // the request header blocks

	st   []h2stream // this Do's streams: stream i has ID first+2i
	idx  []int      // request index of each stream (several requests)
	seqs []uint64   // with an Exchange: each stream's sequence number
	sent int64      // with an Exchange: when this Do's streams were sent
	xbuf []byte     // with an Exchange: the body being sent
}

// h2stream is one stream of a Do.
type h2stream struct {
	resp    response
	recv    int64 // DATA bytes since the stream's last WINDOW_UPDATE
	done    bool
	skipped bool // not processed (above a GOAWAY's last stream ID)
}

var _ driver.Conn = (*h2conn)(nil)

// openH2 starts HTTP/2 on a TCP connection: TLS with ALPN h2 first for
// https, then the preface, benchrig's settings and window, and the
// server's settings read (a server that does not answer in HTTP/2 is a
// setup error here, not a run of errors).
func (d *Driver) openH2(ctx context.Context, nc net.Conn) (driver.Conn, error) {
	if d.w.tls != nil {
		tc, err := d.w.tls.handshake(ctx, nc, []string{ProtoH2}, d.dialTimeout())
		if err != nil {
			if noALPN(err) {
				return nil, fmt.Errorf("the server does not offer HTTP/2 over TLS (it refused ALPN h2): drop --http2 for HTTP/1.1")
			}
			return nil, err
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != ProtoH2 {
			_ = tc.Close()
			return nil, fmt.Errorf("the server did not agree to HTTP/2 over TLS (ALPN chose %q): drop --http2 for HTTP/1.1", p)
		}
		nc = tc
	}
	c := &h2conn{d: d, nc: nc, bw: bufio.NewWriterSize(nc, 64<<10), peerMaxStreams: 1<<32 - 1,
		peerInitWindow: 65535, peerMaxFrame: h2DefaultFrame, sendWindow: 65535, nextID: 1}
	c.br = bufio.NewReaderSize(nc, 64<<10)
	c.fr = http2.NewFramer(c.bw, c.br)
	c.dec = hpack.NewDecoder(4096, c.emitStatus)
	c.dec.SetMaxStringLength(maxHeaderBytes)
	c.fr.SetReuseFrames()
	c.resetHeaders()
	if err := c.start(d.dialTimeout()); err != nil {
		_ = nc.Close()
		return nil, err
	}
	return c, nil
}

// start writes the client preface and settings and reads the server's.
func (c *h2conn) start(timeout time.Duration) error {
	_ = c.nc.SetDeadline(time.Now().Add(timeout))
	defer c.nc.SetDeadline(time.Time{})
	_, _ = c.bw.WriteString(http2.ClientPreface)
	_ = c.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2Window},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: maxHeaderBytes})
	_ = c.fr.WriteWindowUpdate(0, h2Window-65535)
	if err := c.bw.Flush(); err != nil {
		return fmt.Errorf("HTTP/2 preface: %w", err)
	}
	f, err := c.fr.ReadFrame()
	if err != nil {
		return fmt.Errorf("the server did not answer in HTTP/2 (no SETTINGS frame: %v); is it an HTTP/2 server?", err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		return fmt.Errorf("the server did not answer in HTTP/2 (first frame %s, want SETTINGS)", f.Header().Type)
	}
	c.settings(sf)
	_ = c.fr.WriteSettingsAck()
	return c.bw.Flush()
}

// settings applies the server's SETTINGS.
func (c *h2conn) settings(sf *http2.SettingsFrame) {
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

// Do implements driver.Conn.
func (c *h2conn) Do(ctx context.Context, reqs []driver.Request, out []driver.Outcome) error {
	n := len(reqs)
	c.prepare(reqs, out)
	if err := c.setDeadline(); err != nil {
		return c.failRest(out, err)
	}
	switch {
	case c.goaway:
		c.failRest(out, errors.New("connection going away"))
		return &driver.Reconnect{Cause: c.goawayCause(), Retry: true}
	case uint32(n) > c.peerMaxStreams:
		return c.failRest(out, fmt.Errorf("%d streams at once: the server allows %d (SETTINGS_MAX_CONCURRENT_STREAMS); lower --streams", n, c.peerMaxStreams))
	case c.nextID > h2MaxStreamID-2*uint32(n):
		c.failRest(out, errors.New("stream IDs used up"))
		return &driver.Reconnect{Cause: "stream IDs used up", Retry: true}
	}
	first := c.nextID
	if c.d.x != nil {
		c.sent = driver.Now() // what an exchange's verdicts and resets are timed from
	}
	if err := c.send(first); err != nil {
		if c.used && cause(err) != "" {
			return c.lost(out, err)
		}
		return c.failRest(out, err)
	}
	c.nextID = first + 2*uint32(n)
	if err := c.bw.Flush(); err != nil {
		if c.used {
			return c.lost(out, err)
		}
		return c.failRest(out, err)
	}
	// Let the other connections send before reading, as the HTTP/1.1
	// connections do: the responses take a round trip, and a read now
	// mostly finds nothing, costing a system call before parking anyway.
	if c.br.Buffered() == 0 {
		runtime.Gosched()
	}
	if err := c.read(first, out); err != nil {
		return err
	}
	c.used = true
	if c.goaway {
		from := n
		for i := range c.st {
			if c.st[i].skipped {
				from = i
				break
			}
		}
		return &driver.Reconnect{Cause: c.goawayCause(), From: from, Retry: true, Written: true}
	}
	return nil
}

// prepare resets the streams of a Do and picks each request.
func (c *h2conn) prepare(reqs []driver.Request, out []driver.Outcome) {
	n := len(reqs)
	if cap(c.st) < n {
		c.st = make([]h2stream, n)
	}
	c.st = c.st[:n]
	for i := range c.st {
		s := &c.st[i]
		body, vals := s.resp.body[:0], s.resp.vals
		*s = h2stream{}
		s.resp.body, s.resp.vals = body, vals
		c.d.resetFields(&s.resp)
	}
	c.idx = c.idx[:0]
	if c.d.x != nil {
		c.seqs = c.seqs[:0]
		for _, q := range reqs {
			c.seqs = append(c.seqs, q.Seq)
		}
	}
	if t := c.d.t; t.multi() {
		for _, q := range reqs {
			c.idx = append(c.idx, t.pick(q.Seq))
		}
	}
	for i := range out {
		out[i] = driver.Outcome{Op: c.op(i)}
	}
}

func (c *h2conn) op(i int) uint8 {
	if t := c.d.t; t.ops != nil && i < len(c.idx) {
		return t.op(c.idx[i])
	}
	return 0
}

// send writes every stream's HEADERS (and DATA) into the buffer.
func (c *h2conn) send(first uint32) error {
	t := c.d.t
	for i := range c.st {
		k := 0
		if t.multi() {
			k = c.idx[i]
		}
		id := first + 2*uint32(i)
		body := t.reqs[k].h2body
		if c.d.x != nil {
			c.xbuf = c.d.x.AppendBody(c.xbuf[:0], c.seqs[i])
			body = c.xbuf
		}
		if err := writeHeaders(c.fr, c.peerMaxFrame, id, c.block(c.d.t, k), len(body) == 0); err != nil {
			return err
		}
		if len(body) == 0 {
			continue
		}
		if int64(len(body)) > min(c.peerInitWindow, c.sendWindow) {
			return fmt.Errorf("request body of %d bytes over the server's HTTP/2 flow-control window (%d)", len(body), min(c.peerInitWindow, c.sendWindow))
		}
		c.sendWindow -= int64(len(body))
		for len(body) > 0 {
			k := min(len(body), int(c.peerMaxFrame))
			if err := c.fr.WriteData(id, k == len(body), body[:k]); err != nil {
				return err
			}
			body = body[k:]
		}
	}
	return nil
}

// goawayCause is the reconnect cause of the GOAWAY received.
func (c *h2conn) goawayCause() string {
	if c.goCode == http2.ErrCodeNo {
		return CauseGoaway
	}
	return CauseGoaway + " (" + c.goCode.String() + ")"
}

// lost handles a reused connection that ended before any frame of this
// Do arrived: the server closed it while idle. Every stream may be sent
// again (none was processed) when every request is safe to repeat.
func (c *h2conn) lost(out []driver.Outcome, err error) error {
	c.failRest(out, err)
	cs := cause(err)
	if cs == "" {
		return err
	}
	return &driver.Reconnect{Cause: cs, Retry: c.d.t.retryable(c.idx), Written: true}
}

// failRest fails every stream not yet done with err and returns it.
func (c *h2conn) failRest(out []driver.Outcome, err error) error {
	now := driver.Now()
	class, msg := failure(err)
	for i := range out {
		if i < len(c.st) && c.st[i].done {
			continue
		}
		out[i] = driver.Outcome{Class: class, Done: now, Msg: msg, Op: c.op(i)}
	}
	return err
}

// setDeadline keeps the connection's deadline at about now + timeout, as
// the HTTP/1.1 connection does.
func (c *h2conn) setDeadline() error { return keepDeadline(c.nc, &c.deadline, c.d.cfg.Timeout) }

// Close implements driver.Conn.
func (c *h2conn) Close() error {
	var err error
	c.once.Do(func() { err = c.nc.Close() })
	return err
}
