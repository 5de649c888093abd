package http

import (
	"errors"
	"fmt"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/benchrig/benchrig/internal/driver"
)

// read reads frames until every stream of the Do (IDs first, first+2, …)
// ended: completed, reset by the server, or not processed under a GOAWAY.
// It returns an error only when the connection is unusable; out holds
// every stream's outcome.
func (c *h2conn) read(first uint32, out []driver.Outcome) error {
	remaining := len(c.st)
	got := false // a frame of this Do arrived
	flush := false
	for remaining > 0 {
		if flush {
			if err := c.bw.Flush(); err != nil {
				return c.failRest(out, err)
			}
			flush = false
		}
		f, err := c.fr.ReadFrame()
		if err != nil {
			var se http2.StreamError
			if errors.As(err, &se) {
				if i, ok := c.stream(se.StreamID, first); ok {
					got = true
					c.end(i, out, driver.Error, "HTTP/2 stream error: "+se.Code.String())
					remaining--
					continue
				}
			}
			if !got && c.used {
				return c.lost(out, err)
			}
			return c.failRest(out, err)
		}
		switch f := f.(type) {
		case *http2.HeadersFrame:
			i, ok := c.stream(f.StreamID, first)
			if !ok {
				return c.failRest(out, errH2Unsolicited)
			}
			got = true
			c.hs = headerState{stream: i, end: f.StreamEnded()}
			c.dec.SetEmitEnabled(true)
			if done, err := c.headerFragment(f.HeaderBlockFragment(), f.HeadersEnded(), int64(f.Header().Length)); err != nil {
				return c.failRest(out, err)
			} else if done && c.headersDone(out) {
				remaining--
			}
		case *http2.ContinuationFrame:
			if done, err := c.headerFragment(f.HeaderBlockFragment(), f.HeadersEnded(), int64(f.Header().Length)); err != nil {
				return c.failRest(out, err)
			} else if done && c.headersDone(out) {
				remaining--
			}
		case *http2.DataFrame:
			i, ok := c.stream(f.StreamID, first)
			if !ok {
				return c.failRest(out, errH2Unsolicited)
			}
			got = true
			s := &c.st[i]
			n := int64(f.Header().Length)
			s.resp.bytes += n + 9
			if s.resp.status == 0 {
				c.end(i, out, driver.Error, errH2NoStatus.Error())
				remaining--
				continue
			}
			if c.d.x != nil {
				c.d.data(&s.resp, f.Data(), driver.Now())
			}
			if c.d.keepBody() {
				keepBytes(&s.resp, f.Data())
			}
			c.recv += n
			s.recv += n
			if c.recv >= h2Refill {
				_ = c.fr.WriteWindowUpdate(0, uint32(c.recv))
				c.recv, flush = 0, true
			}
			if f.StreamEnded() {
				c.complete(i, out)
				remaining--
			} else if s.recv >= h2Refill {
				_ = c.fr.WriteWindowUpdate(f.StreamID, uint32(s.recv))
				s.recv, flush = 0, true
			}
		case *http2.RSTStreamFrame:
			if i, ok := c.stream(f.StreamID, first); ok {
				got = true
				class, msg := c.d.reset(f.ErrCode, c.sent, driver.Now())
				c.end(i, out, class, msg)
				remaining--
			}
		case *http2.SettingsFrame:
			if !f.IsAck() {
				c.settings(f)
				_ = c.fr.WriteSettingsAck()
				flush = true
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = c.fr.WritePing(true, f.Data)
				flush = true
			}
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				c.sendWindow += int64(f.Increment)
			}
		case *http2.GoAwayFrame:
			got = true
			c.goaway, c.goCode = true, f.ErrCode
			for i := range c.st {
				if id := first + 2*uint32(i); id > f.LastStreamID && !c.st[i].done {
					c.st[i].skipped = true
					c.end(i, out, driver.Error, "not processed: "+c.goawayCause())
					remaining--
				}
			}
		case *http2.PushPromiseFrame:
			return c.failRest(out, errH2Push)
		}
	}
	if flush {
		_ = c.bw.Flush()
	}
	return nil
}

// stream returns the index of the open stream of this Do with the ID.
func (c *h2conn) stream(id, first uint32) (int, bool) {
	if id < first || (id-first)%2 != 0 {
		return 0, false
	}
	i := int((id - first) / 2)
	if i >= len(c.st) || c.st[i].done {
		return 0, false
	}
	return i, true
}

// complete ends stream i with its response: OK, or why it is not the
// expected one.
func (c *h2conn) complete(i int, out []driver.Outcome) {
	s := &c.st[i]
	s.done = true
	class, msg := c.d.judge(&s.resp, c.sent)
	out[i] = driver.Outcome{Class: class, Msg: msg, Bytes: s.resp.bytes, Done: driver.Now(), Op: c.op(i)}
}

// end ends stream i with a failure counted by msg.
func (c *h2conn) end(i int, out []driver.Outcome, class driver.Class, msg string) {
	s := &c.st[i]
	s.done = true
	out[i] = driver.Outcome{Class: class, Bytes: s.resp.bytes, Done: driver.Now(), Op: c.op(i), Msg: msg}
}

// headerState is the header block being read (HEADERS, then any
// CONTINUATION frames).
type headerState struct {
	stream int    // index of its stream in the Do
	end    bool   // the HEADERS frame ended the stream
	status string // :status, the first field
	bytes  int64  // its fragments' bytes
}

// emitStatus is the hpack decoder's emit function: it keeps :status, the
// first field of a response, then stops emitting, so that the other
// fields (date, server, content-type: literals nginx sends each time)
// are parsed, to keep the decoder's table in step, but not decoded into
// strings. With an Exchange every field is seen, for those it names.
func (c *h2conn) emitStatus(f hpack.HeaderField) {
	if f.Name == ":status" {
		c.hs.status = f.Value
	}
	if c.d.x == nil {
		c.dec.SetEmitEnabled(false)
		return
	}
	c.d.field(&c.st[c.hs.stream].resp, f)
}

// headerFragment decodes one fragment of a header block; done at its end.
func (c *h2conn) headerFragment(frag []byte, end bool, n int64) (done bool, err error) {
	c.hs.bytes += n + 9
	if c.hs.bytes > maxHeaderBytes {
		return false, errHeadersTooLarge
	}
	if _, err := c.dec.Write(frag); err != nil {
		return false, fmt.Errorf("%w: HTTP/2 header block: %v", errMalformed, err)
	}
	if !end {
		return false, nil
	}
	if err := c.dec.Close(); err != nil {
		return false, fmt.Errorf("%w: HTTP/2 header block: %v", errMalformed, err)
	}
	return true, nil
}

// headersDone applies a complete header block to its stream and reports
// whether the stream ended.
func (c *h2conn) headersDone(out []driver.Outcome) bool {
	i := c.hs.stream
	s := &c.st[i]
	s.resp.bytes += c.hs.bytes
	if s.resp.status == 0 {
		st, ok := atoi3([]byte(c.hs.status))
		if !ok || len(c.hs.status) != 3 {
			c.end(i, out, driver.Error, "malformed response")
			return true
		}
		if st >= 100 && st < 200 {
			return false // informational: the real headers follow
		}
		s.resp.status = st
	}
	if c.hs.end {
		s.resp.trailers = true // trailers, or a headers-only response
		c.complete(i, out)
		return true
	}
	return false
}
