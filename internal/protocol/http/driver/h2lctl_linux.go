//go:build linux

package http

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"golang.org/x/net/http2"

	"github.com/benchrig/benchrig/internal/driver"
)

// An h2loop connection's control frames, and how its streams end when
// the connection does.

// control reads one frame other than DATA, HEADERS and CONTINUATION (in
// c.src) with the Framer and applies it.
func (l *h2loop) control(c *h2lc, now int64) {
	f, err := c.fr.ReadFrame()
	if err != nil {
		var se http2.StreamError
		if errors.As(err, &se) {
			if i, ok := c.slot(se.StreamID); ok {
				l.end(c, i, driver.Error, "HTTP/2 stream error: "+se.Code.String(), now)
				return
			}
		}
		l.fail(c, err)
		return
	}
	switch f := f.(type) {
	case *http2.RSTStreamFrame:
		if i, ok := c.slot(f.StreamID); ok {
			class, msg := l.d.reset(f.ErrCode, c.slots[i].sent, now)
			l.end(c, i, class, msg, now)
		}
	case *http2.SettingsFrame:
		if !f.IsAck() {
			c.settings(f)
			_ = c.fr.WriteSettingsAck()
		}
	case *http2.PingFrame:
		if !f.IsAck() {
			_ = c.fr.WritePing(true, f.Data)
		}
	case *http2.WindowUpdateFrame:
		if f.StreamID == 0 {
			c.sendWindow += int64(f.Increment)
		}
	case *http2.GoAwayFrame:
		l.goaway(c, f.LastStreamID, f.ErrCode, now)
	case *http2.PushPromiseFrame:
		l.fail(c, errH2Push)
	}
}

// windowUpdate applies a WINDOW_UPDATE frame's payload p: the
// connection's send window grows (streams' own windows are not tracked: a
// body never exceeds the server's initial window); an increment of 0 is a
// protocol error, of the connection or of its stream (RFC 9113 §6.9).
func (l *h2loop) windowUpdate(c *h2lc, id uint32, p []byte, now int64) {
	if len(p) != 4 {
		l.fail(c, fmt.Errorf("%w: WINDOW_UPDATE of %d bytes, want 4", errMalformed, len(p)))
		return
	}
	inc := binary.BigEndian.Uint32(p) & (1<<31 - 1)
	switch {
	case inc == 0 && id == 0:
		l.fail(c, errH2Protocol)
	case inc == 0:
		if i, ok := c.slot(id); ok {
			l.end(c, i, driver.Error, "HTTP/2 stream error: "+http2.ErrCodeProtocol.String(), now)
		}
	case id == 0:
		c.sendWindow += int64(inc)
	}
}

// goaway handles the server's GOAWAY: no new stream on c; the streams
// above its last stream ID were not processed (RFC 9113 §6.8) and are
// sent again on a new connection, once (a second time they are errors,
// as the engine re-sends a request at most once); the others finish.
func (l *h2loop) goaway(c *h2lc, last uint32, code http2.ErrCode, now int64) {
	c.goaway, c.goCause = true, CauseGoaway
	if code != http2.ErrCodeNo {
		c.goCause = CauseGoaway + " (" + code.String() + ")"
	}
	for i := range c.slots {
		s := &c.slots[i]
		switch {
		case s.id <= last:
		case s.stale:
			s.id = 0
			l.stale--
		case s.again:
			l.end(c, i, driver.Error, "not processed: "+c.goCause, now)
		default:
			s.id, s.again = 0, true
			c.resend = append(c.resend, *s)
		}
	}
}

// retire replaces c once its last stream after a GOAWAY (or its last
// stream ID) ended: a reconnect, whose requests not processed are sent
// again on the new socket.
func (l *h2loop) retire(c *h2lc, now int64) {
	l.drop(c)
	c.cause, c.reopen = c.goCause, true
	if !l.stopping || len(c.resend) > 0 {
		l.connect(c, now)
	}
}

// eof handles the server closing c.
func (l *h2loop) eof(c *h2lc) {
	l.lost(c, io.EOF)
}

// lost handles c's end by an I/O error. The server closing or resetting a
// connection with nothing in flight (its idle timeout) is a reconnect;
// so is a reused connection closed before any frame of its streams came
// back, whose requests are sent again once when each may be repeated.
// Anything else fails the streams (fail).
func (l *h2loop) lost(c *h2lc, err error) {
	cs := cause(err)
	if cs == "" {
		l.fail(c, err)
		return
	}
	now := driver.Now()
	if c.active()+c.stale() == 0 && len(c.resend) == 0 {
		l.drop(c)
		c.cause, c.reopen = cs, true
		if !l.stopping {
			l.connect(c, now)
		}
		return
	}
	retry := c.used && c.stale() == 0
	for i := range c.slots {
		if s := &c.slots[i]; s.id != 0 && (s.got || s.again || !l.d.t.reqs[s.k].retry) {
			retry = false
		}
	}
	if !retry {
		l.fail(c, err)
		return
	}
	for i := range c.slots {
		if s := &c.slots[i]; s.id != 0 {
			s.again = true
			c.resend = append(c.resend, *s)
		}
	}
	l.drop(c)
	c.cause, c.reopen = cs, true
	l.connect(c, now)
}

// fail fails every request of c (streams on the wire and requests
// waiting for it) with err, closes it and reopens it after a pause.
func (l *h2loop) fail(c *h2lc, err error) {
	now := driver.Now()
	class, msg := failure(err)
	o := &l.out
	for i := range c.slots {
		s := &c.slots[i]
		switch {
		case s.id == 0:
		case s.stale:
			l.stale--
		default:
			*o = driver.Outcome{Class: class, Done: now, Msg: msg, Op: s.op, Bytes: s.resp.bytes}
			l.inflight--
			l.w.Record(o, s.sent)
		}
		s.id = 0
	}
	for i := range c.resend {
		*o = driver.Outcome{Class: class, Done: now, Msg: msg, Op: c.resend[i].op}
		l.inflight--
		l.w.Record(o, c.resend[i].sent)
	}
	c.resend = c.resend[:0]
	l.drop(c)
	c.cause = driver.CauseError
	l.pause(c, now)
}
