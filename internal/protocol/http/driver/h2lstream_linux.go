//go:build linux

package http

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// The streams of an h2loop connection: started as slots free up, their
// frames read and parsed in the pass that read them.

var (
	errH2FrameSize = fmt.Errorf("%w: HTTP/2 frame larger than 16384 bytes (SETTINGS_MAX_FRAME_SIZE)", errMalformed)
	errH2Protocol  = fmt.Errorf("%w: HTTP/2 protocol error", errMalformed)
)

// HTTP/2 frame types and flags read without the Framer (RFC 9113 §6).
const (
	h2Data         = 0x0
	h2Headers      = 0x1
	h2WindowUpdate = 0x8
	h2Continuation = 0x9
	h2EndStream    = 0x1
	h2EndHeaders   = 0x4
	h2Padded       = 0x8
	h2Priority     = 0x20
)

// fill starts a stream in every free slot of c: first the requests
// waiting for it (re-sent, or held by flow control), then new ones
// claimed from the work. Its frames go to c.wbuf, written by sendReady.
func (l *h2loop) fill(c *h2lc, now int64) {
	if len(c.slots) < l.pipeline {
		c.slots = append(c.slots, make([]h2slot, l.pipeline-len(c.slots))...)
		n := 1
		for n < 2*len(c.slots) {
			n <<= 1
		}
		c.byID = make([]int32, n)
	}
	if c.goaway {
		return // no new stream: reopened once the last one ends
	}
	free := min(l.pipeline, int(min(c.peerMaxStreams, 1<<20))) - c.active() - c.stale()
	for free > 0 && len(c.resend) > 0 {
		if !l.start(c, &c.resend[0], now) {
			return
		}
		c.resend = c.resend[:copy(c.resend, c.resend[1:])]
		free--
	}
	if free <= 0 || l.stopping || len(c.resend) > 0 || l.paced != nil {
		return // at a rate the requests due are taken by sendDue
	}
	seq, k := l.w.Claim(free)
	if k == 0 {
		l.stopping = true
		return
	}
	l.inflight += k
	t := l.d.t
	for j := 0; j < k; j++ {
		i := t.pick(seq + uint64(j))
		s := h2slot{k: i, op: t.op(i), sent: now, seq: seq + uint64(j)}
		if len(c.resend) > 0 || !l.start(c, &s, now) {
			c.resend = append(c.resend, s) // held until the window opens
		}
	}
}

// start opens a stream for request w in a free slot; false when its body
// must wait for the server's flow-control window (or c failed).
func (l *h2loop) start(c *h2lc, w *h2slot, now int64) bool {
	body := l.d.t.reqs[w.k].h2body
	if l.d.x != nil {
		c.xbuf = l.d.x.AppendBody(c.xbuf[:0], w.seq)
		body = c.xbuf
	}
	if int64(len(body)) > c.peerInitWindow {
		o := &l.out
		*o = driver.Outcome{Class: driver.Error, Op: w.op, Done: now,
			Msg: fmt.Sprintf("request body of %d bytes over the server's HTTP/2 flow-control window (%d)", len(body), c.peerInitWindow)}
		l.record(w, o)
		return true
	}
	if int64(len(body)) > c.sendWindow {
		return false
	}
	i := 0
	for c.slots[i].id != 0 {
		i++
	}
	s := &c.slots[i]
	rb, rv := s.resp.body[:0], s.resp.vals
	*s = *w
	s.resp, s.got, s.recv, s.stale = response{body: rb, vals: rv}, false, 0, false
	l.d.resetFields(&s.resp)
	if to := int64(l.d.cfg.Timeout); to > 0 {
		l.alarm.Set(s.sent + to) // a re-sent stream: from its first send
	}
	s.id = c.nextID
	c.byID[(s.id>>1)&uint32(len(c.byID)-1)] = int32(i)
	c.nextID += 2
	if c.nextID > h2MaxStreamID-2 {
		c.goaway, c.goCause = true, "stream IDs used up"
	}
	_ = writeHeaders(c.fr, c.peerMaxFrame, s.id, c.block(l.d.t, s.k), len(body) == 0)
	c.sendWindow -= int64(len(body))
	for len(body) > 0 {
		n := min(len(body), int(c.peerMaxFrame))
		_ = c.fr.WriteData(s.id, n == len(body), body[:n])
		body = body[n:]
	}
	return true
}

// flush moves c's frames of this pass (sealed over TLS) to its outbox
// and writes it.
func (l *h2loop) flush(c *h2lc) {
	b := c.wbuf
	if c.tc != nil {
		p := c.tp
		p.out = append(p.sbuf[:0], p.out...) // what tls wrote while reading goes first
		if _, err := c.tc.Write(c.wbuf); err != nil {
			l.fail(c, err)
			return
		}
		b, p.sbuf, p.out = p.out, p.out, nil
	}
	if len(c.out.Pending) == 0 {
		c.obuf = append(c.obuf[:0], b...)
		c.out.Pending = c.obuf
	} else {
		c.out.Pending = append(c.out.Pending, b...)
	}
	c.wbuf = c.wbuf[:0]
	l.write(c)
}

func (l *h2loop) write(c *h2lc) {
	if l.P.Ring() {
		l.ringSend(c)
		return
	}
	if err := l.P.Flush(c.fd, int32(c.i), int32(c.gen), &c.out); err != nil {
		l.lost(c, err)
	}
}

// read reads what arrived on c and handles every whole frame in it.
func (l *h2loop) read(c *h2lc) {
	if c.tc != nil {
		l.readTLS(c)
		return
	}
	m := copy(l.buf, c.pend)
	n, err := evloop.ReadNonblock(c.fd, l.buf[m:])
	switch {
	case err == unix.EAGAIN:
		return
	case err != nil:
		l.lost(c, err)
		return
	case n == 0:
		l.eof(c)
		return
	}
	l.frames(c, l.buf[:m+n], driver.Now())
}

// readTLS reads c's ciphertext, decrypts it and handles the frames.
func (l *h2loop) readTLS(c *h2lc) {
	n, err := evloop.ReadNonblock(c.fd, l.cbuf)
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

// decrypt handles the frames of the ciphertext fed to c's tlsPipe.
func (l *h2loop) decrypt(c *h2lc) {
	tc, now := c.tc, driver.Now()
	for c.tc == tc {
		m := copy(l.buf, c.pend)
		k, err := tc.Read(l.buf[m:])
		if k > 0 {
			l.frames(c, l.buf[:m+k], now)
		}
		if err != nil && c.tc == tc {
			var wb wouldBlock
			switch {
			case errors.As(err, &wb):
				if len(c.tp.out) > 0 {
					l.queue(c) // tls's answer (a key update) to write
				}
			case errors.Is(err, io.EOF):
				l.eof(c)
			default:
				l.lost(c, err)
			}
			return
		}
	}
}

// frames handles every whole frame of data, keeping a partial one.
// DATA, HEADERS and CONTINUATION are read here (the Framer makes a frame
// object per HEADERS), every other frame type by the Framer.
func (l *h2loop) frames(c *h2lc, data []byte, now int64) {
	gen := c.gen // a new socket's, once c failed or was reopened
	for len(data) >= 9 && c.gen == gen && c.st == evloop.Open {
		n := int(data[0])<<16 | int(data[1])<<8 | int(data[2])
		if n > h2DefaultFrame { // benchrig never raises SETTINGS_MAX_FRAME_SIZE
			l.fail(c, errH2FrameSize)
			return
		}
		if len(data) < 9+n {
			break
		}
		typ, flags, id := data[3], data[4], binary.BigEndian.Uint32(data[5:9])&(1<<31-1)
		frame, p := data[:9+n], data[9:9+n]
		data = data[9+n:]
		if c.hsOpen && (typ != h2Continuation || id != c.hsID) {
			l.fail(c, errH2Protocol)
			return
		}
		switch typ {
		case h2Data:
			l.onData(c, id, flags, p, now)
		case h2Headers:
			l.onHeaders(c, id, flags, p, now)
		case h2WindowUpdate:
			// read here: the Framer makes a frame object of each, and a
			// server reading request bodies sends many
			l.windowUpdate(c, id, p, now)
		case h2Continuation:
			if !c.hsOpen {
				l.fail(c, errH2Protocol)
				return
			}
			l.headerFragment(c, p, flags&h2EndHeaders != 0, n, now)
		default:
			c.src.b = frame
			l.control(c, now)
		}
	}
	if c.gen != gen || c.st != evloop.Open {
		return // failed, or reopened
	}
	c.pend = append(c.pend[:0], data...)
	if c.goaway && c.active()+c.stale() == 0 {
		l.retire(c, now)
		return
	}
	l.queue(c)
}

// slot returns the index of c's stream id on the wire: where byID says
// (the slot of the last stream whose ID fell on that entry), else by a
// scan (a stream that outlived 2×streams younger ones).
func (c *h2lc) slot(id uint32) (int, bool) {
	if len(c.byID) > 0 {
		if i := c.byID[(id>>1)&uint32(len(c.byID)-1)]; c.slots[i].id == id && id != 0 {
			return int(i), true
		}
	}
	for i := range c.slots {
		if c.slots[i].id == id && id != 0 {
			return i, true
		}
	}
	return 0, false
}

// unpad strips a frame's padding.
func unpad(flags byte, p []byte) ([]byte, bool) {
	if flags&h2Padded == 0 {
		return p, true
	}
	if len(p) < 1 || int(p[0]) > len(p)-1 {
		return nil, false
	}
	return p[1 : len(p)-int(p[0])], true
}

func (l *h2loop) onData(c *h2lc, id uint32, flags byte, p []byte, now int64) {
	n := int64(len(p))
	data, ok := unpad(flags, p)
	if !ok {
		l.fail(c, errH2Protocol)
		return
	}
	i, ok := c.slot(id)
	if !ok {
		l.fail(c, errH2Unsolicited)
		return
	}
	s := &c.slots[i]
	s.got = true
	s.resp.bytes += n + 9
	c.recv += n
	if c.recv >= h2Refill {
		_ = c.fr.WriteWindowUpdate(0, uint32(c.recv))
		c.recv = 0
	}
	if s.resp.status == 0 {
		l.end(c, i, driver.Error, errH2NoStatus.Error(), now)
		return
	}
	if l.d.x != nil {
		l.d.data(&s.resp, data, now)
	}
	if l.d.keepBody() {
		keepBytes(&s.resp, data)
	}
	s.recv += n
	if flags&h2EndStream != 0 {
		l.complete(c, i, now)
	} else if s.recv >= h2Refill {
		_ = c.fr.WriteWindowUpdate(id, uint32(s.recv))
		s.recv = 0
	}
}

func (l *h2loop) onHeaders(c *h2lc, id uint32, flags byte, p []byte, now int64) {
	n := len(p)
	p, ok := unpad(flags, p)
	if ok && flags&h2Priority != 0 {
		if ok = len(p) >= 5; ok {
			p = p[5:]
		}
	}
	if !ok {
		l.fail(c, errH2Protocol)
		return
	}
	i, ok := c.slot(id)
	if !ok {
		l.fail(c, errH2Unsolicited)
		return
	}
	c.slots[i].got = true
	c.hs = headerState{stream: i, end: flags&h2EndStream != 0}
	c.hsID = id
	c.dec.SetEmitEnabled(true)
	l.headerFragment(c, p, flags&h2EndHeaders != 0, n, now)
}

// headerFragment decodes one fragment of a header block and, at its end,
// applies it to its stream (h2conn.headerFragment, headersDone).
func (l *h2loop) headerFragment(c *h2lc, frag []byte, end bool, n int, now int64) {
	c.hs.bytes += int64(n) + 9
	c.hsOpen = !end
	if c.hs.bytes > maxHeaderBytes {
		l.fail(c, errHeadersTooLarge)
		return
	}
	if _, err := c.dec.Write(frag); err != nil {
		l.fail(c, fmt.Errorf("%w: HTTP/2 header block: %v", errMalformed, err))
		return
	}
	if !end {
		return
	}
	if err := c.dec.Close(); err != nil {
		l.fail(c, fmt.Errorf("%w: HTTP/2 header block: %v", errMalformed, err))
		return
	}
	i := c.hs.stream
	s := &c.slots[i]
	s.resp.bytes += c.hs.bytes
	if s.resp.status == 0 {
		st, ok := atoi3([]byte(c.hs.status))
		if !ok || len(c.hs.status) != 3 {
			l.end(c, i, driver.Error, "malformed response", now)
			return
		}
		if st >= 100 && st < 200 {
			return // informational: the real headers follow
		}
		s.resp.status = st
	}
	if c.hs.end {
		s.resp.trailers = true // trailers, or a headers-only response
		l.complete(c, i, now)
	}
}

// complete ends stream i with its response.
func (l *h2loop) complete(c *h2lc, i int, now int64) {
	s := &c.slots[i]
	o := &l.out
	class, msg := l.d.judge(&s.resp, s.sent)
	*o = driver.Outcome{Class: class, Msg: msg, Bytes: s.resp.bytes, Done: now, Op: s.op}
	l.lat += (now - s.sent - l.lat) / 16
	c.used = true
	c.backoff.Reset()
	s.id = 0
	l.record(s, o)
}

// end ends stream i with a failure counted by msg; the connection goes on.
func (l *h2loop) end(c *h2lc, i int, class driver.Class, msg string, now int64) {
	s := &c.slots[i]
	o := &l.out
	*o = driver.Outcome{Class: class, Bytes: s.resp.bytes, Done: now, Op: s.op, Msg: msg}
	s.id = 0
	l.record(s, o)
}
