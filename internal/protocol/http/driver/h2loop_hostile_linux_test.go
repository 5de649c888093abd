//go:build linux

package http

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// frameRig is an h2loop with one open connection and no socket, its
// streams started, to feed its frame reader bytes directly (the loop's
// reopens dial a closed port: they fail fast and are accounted).
func frameRig(t *testing.T) (*h2loop, *h2lc, *tally) {
	t.Helper()
	d, err := New(Config{URL: "h2c://127.0.0.1:1/", Timeout: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	l := &h2loop{d: d, buf: make([]byte, 64<<10), family: unix.AF_INET, dial: 1e9,
		sa: &unix.SockaddrInet4{Port: 1, Addr: [4]byte{127, 0, 0, 1}}}
	c := &h2lc{fd: -1, st: evloop.Open, peerMaxStreams: 100, peerInitWindow: 65535,
		peerMaxFrame: h2DefaultFrame, sendWindow: 65535, nextID: 1}
	c.fr = http2.NewFramer(frameSink{c}, &c.src)
	c.fr.SetReuseFrames()
	c.enc = hpack.NewEncoder(&c.eb)
	c.dec = hpack.NewDecoder(4096, c.emitStatus)
	l.conns = []*h2lc{c}
	w := newTally(1 << 40)
	l.w, l.pipeline = w, 4
	l.fill(c, driver.Now())
	return l, c, w
}

// validFrames is a server's side of a connection whose 4 streams (1, 3,
// 5, 7) are answered, with the control frames a server may send between.
func validFrames() []byte {
	var b bytes.Buffer
	fr := http2.NewFramer(&b, nil)
	_ = fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 8})
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0x88}, EndHeaders: true})
	_ = fr.WriteData(1, true, []byte("hello"))
	_ = fr.WritePing(false, [8]byte{1})
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: []byte{0x88}, EndHeaders: false, PadLength: 3, Priority: http2.PriorityParam{Weight: 1}})
	_ = fr.WriteContinuation(3, true, nil)
	_ = fr.WriteData(3, true, []byte("hello"))
	_ = fr.WriteWindowUpdate(0, 100)
	_ = fr.WriteRSTStream(5, http2.ErrCodeInternal)
	_ = fr.WriteDataPadded(7, false, []byte("x"), []byte{0, 0})
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 7, BlockFragment: []byte{0x88}, EndHeaders: true, EndStream: true})
	_ = fr.WriteGoAway(7, http2.ErrCodeNo, nil)
	return b.Bytes()
}

// checkAccounts fails unless every request the loop claimed is recorded
// or in flight, and those in flight are the connection's.
func checkAccounts(t *testing.T, l *h2loop, c *h2lc, w *tally, what string) {
	t.Helper()
	if l.inflight < 0 || l.stale != 0 || uint64(w.ok+w.failed+l.inflight) != w.next || w.badSent != 0 {
		t.Fatalf("%s: claimed %d, recorded %d ok + %d failed, %d in flight, %d stale, %d badly timed",
			what, w.next, w.ok, w.failed, l.inflight, l.stale, w.badSent)
	}
	if n := c.active() + len(c.resend); n != l.inflight {
		t.Fatalf("%s: %d requests in flight, the connection holds %d", what, l.inflight, n)
	}
}

// The loop's own frame reader (DATA, HEADERS, CONTINUATION without the
// Framer) on a valid exchange answers what it should, and on thousands of
// corruptions of it (bytes flipped, cut, doubled, fed in random pieces)
// neither panics nor loses or double-counts a request, handed to it
// directly or as the ring's receives are (RingFeed).
func TestH2LoopFramesHostile(t *testing.T) {
	valid := validFrames()
	l, c, w := frameRig(t)
	l.frames(c, valid, driver.Now())
	// streams 1 and 3 answered, 5 reset, 7 a 200 with DATA before its
	// HEADERS (an error); GOAWAY with nothing left: the connection is
	// replaced (a refused reopen here)
	if w.ok != 2 || w.msgs["error: stream reset by server: INTERNAL_ERROR"] != 1 || w.msgs["error: "+errH2NoStatus.Error()] != 1 {
		t.Fatalf("valid frames: %d ok, %v", w.ok, w.msgs)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		data := append([]byte(nil), valid...)
		switch rng.IntN(4) {
		case 0:
			for k := rng.IntN(4) + 1; k > 0; k-- {
				data[rng.IntN(len(data))] = byte(rng.Uint32())
			}
		case 1:
			data = data[:rng.IntN(len(data))]
		case 2:
			at := rng.IntN(len(data))
			data = append(data[:at:at], append(valid[at:], data[at:]...)...)
		case 3:
			data[rng.IntN(len(data))] ^= 1 << rng.IntN(8)
		}
		l, c, w := frameRig(t)
		gen := c.gen
		for len(data) > 0 && c.gen == gen && c.st == evloop.Open {
			k := rng.IntN(len(data)) + 1
			if i%2 == 0 {
				in := append(append([]byte(nil), c.pend...), data[:k]...)
				l.frames(c, in, driver.Now())
			} else { // as the ring hands them over (RingFeed joins c.pend)
				l.RingFeed(c.i, data[:k])
			}
			data = data[k:]
			checkAccounts(t, l, c, w, "corrupted frames")
		}
		if c.st == evloop.Open && c.gen == gen {
			l.lost(c, errRequestTimeout) // the rest fails
			checkAccounts(t, l, c, w, "after the connection failed")
		}
	}
}
