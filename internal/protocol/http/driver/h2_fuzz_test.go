package http

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/fuzzcheck"
)

// fuzzConn is a connection whose peer sends the bytes of r and takes
// whatever is written.
type fuzzConn struct{ r *bytes.Reader }

func (c fuzzConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c fuzzConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c fuzzConn) Close() error                     { return nil }
func (c fuzzConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c fuzzConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c fuzzConn) SetDeadline(time.Time) error      { return nil }
func (c fuzzConn) SetReadDeadline(time.Time) error  { return nil }
func (c fuzzConn) SetWriteDeadline(time.Time) error { return nil }

// h2Frames is a server's side of an HTTP/2 connection written by a Framer:
// its SETTINGS, then what frames writes.
func h2Frames(frames func(fr *http2.Framer, block func(status string) []byte)) []byte {
	var b bytes.Buffer
	fr := http2.NewFramer(&b, nil)
	_ = fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100})
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	frames(fr, func(status string) []byte {
		hb.Reset()
		_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: status})
		_ = enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "text/plain"})
		return append([]byte(nil), hb.Bytes()...)
	})
	return b.Bytes()
}

// FuzzH2Read: the HTTP/2 client reads whatever a server sends (the
// framer, hpack, and benchrig's reading of frames into streams). An h2c
// connection whose peer sends the input's bytes (after its SETTINGS) runs
// Do with two streams until the input ends: no panic, no Do that neither
// ends every stream nor fails, every stream's outcome of a class, and
// allocation within the fuzzcheck bound.
func FuzzH2Read(f *testing.F) {
	ok := h2Frames(func(fr *http2.Framer, block func(string) []byte) {
		for _, id := range []uint32{1, 3} {
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block("200"), EndHeaders: true})
			_ = fr.WriteData(id, true, []byte("hello"))
		}
	})
	f.Add(ok)
	f.Add(h2Frames(func(fr *http2.Framer, block func(string) []byte) {
		b := block("503")
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: b[:1], EndStream: true})
		_ = fr.WriteContinuation(3, true, b[1:])
		_ = fr.WriteRSTStream(1, http2.ErrCodeInternal)
		_ = fr.WritePing(false, [8]byte{1})
		_ = fr.WriteWindowUpdate(0, 1000)
		_ = fr.WriteSettings(http2.Setting{ID: http2.SettingHeaderTableSize, Val: 0})
		_ = fr.WriteGoAway(1, http2.ErrCodeNo, nil)
	}))
	f.Add(h2Frames(func(fr *http2.Framer, block func(string) []byte) {
		_ = fr.WriteData(1, true, []byte("data before headers"))
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: block("100"), EndHeaders: true})
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: block("2000"), EndHeaders: true, EndStream: true})
		_ = fr.WritePushPromise(http2.PushPromiseParam{StreamID: 1, PromiseID: 2, BlockFragment: block("200"), EndHeaders: true})
	}))
	f.Add(append(append([]byte(nil), ok...), ok[len(ok)/2:]...))
	d, err := New(Config{URL: "h2c://127.0.0.1:1/", Timeout: time.Second, ExpectStatus: 200})
	if err != nil {
		f.Fatal(err)
	}
	// the first seed is two good responses: the harness reads them so
	conn, err := d.openH2(context.Background(), fuzzConn{bytes.NewReader(ok)})
	if err != nil {
		f.Fatal(err)
	}
	out := make([]driver.Outcome, 2)
	if err := conn.Do(context.Background(), make([]driver.Request, 2), out); err != nil || out[0].Class != driver.OK || out[1].Class != driver.OK {
		f.Fatalf("the good seed: %v %+v", err, out)
	}
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcheck.Bound(t, len(data), func() {
			var settings bytes.Buffer
			_ = http2.NewFramer(&settings, nil).WriteSettings()
			in := data
			if !bytes.HasPrefix(data, settings.Bytes()[:3]) {
				in = append(settings.Bytes(), data...)
			}
			nc := fuzzConn{bytes.NewReader(in)}
			conn, err := d.openH2(context.Background(), nc)
			if err != nil {
				return
			}
			c := conn.(*h2conn)
			reqs, out := make([]driver.Request, 2), make([]driver.Outcome, 2)
			for round := 0; round < 64; round++ {
				err := c.Do(context.Background(), reqs, out)
				for i, o := range out {
					if o.Class > driver.Unexpected {
						t.Fatalf("stream %d: class %d", i, o.Class)
					}
				}
				if err != nil {
					return
				}
				for i, s := range c.st {
					if !s.done {
						t.Fatalf("round %d: Do returned with stream %d neither completed nor failed", round, i)
					}
				}
				if nc.r.Len() == 0 {
					return
				}
			}
		})
	})
}
