//go:build linux

package http

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// h2Canned is an HTTP/2 (h2c, prior knowledge) server answering every
// stream with the same frames (HEADERS :status 200, DATA "hello"). It
// answers once it has read all that arrived and has at least answerAt
// streams open (so a client that keeps fewer in flight hangs), or total
// streams came, the client's whole run. hold, when
// set, keeps the response of a connection's n-th stream back (its
// connection counted from 0, n from 1) until release(answered) says so,
// answered being the streams of that connection answered since (never,
// when release is nil). It records the most streams a connection had open
// at once, as it saw them.
type h2Canned struct {
	maxStreams uint32 // SETTINGS_MAX_CONCURRENT_STREAMS, 0: not sent
	// windowBack: the connection's flow-control window is handed back as
	// request bodies are read (else bodies are read and the window kept)
	windowBack bool
	bodyBytes  int
	answerAt   int
	total      int // with answerAt: once this many streams came, every one is answered
	hold       func(conn, n int) bool
	release    func(answered int) bool
	delay      time.Duration // before each write of answers

	mu        sync.Mutex
	conns     int
	maxOpen   int
	received  int
	whileHeld int // answers given while a stream was held, the most on one hold
}

func (s *h2Canned) start(tb testing.TB) string {
	return strings.Replace(serveConns(tb, s.serve), "http://", "h2c://", 1)
}

func (s *h2Canned) serve(c net.Conn) {
	s.mu.Lock()
	ci := s.conns
	s.conns++
	s.mu.Unlock()
	br, bw := bufio.NewReaderSize(c, 64<<10), bufio.NewWriterSize(c, 64<<10)
	if _, err := io.ReadFull(br, make([]byte, len(http2.ClientPreface))); err != nil {
		return
	}
	fr := http2.NewFramer(bw, br)
	var settings []http2.Setting
	if s.maxStreams > 0 {
		settings = append(settings, http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: s.maxStreams})
	}
	_ = fr.WriteSettings(settings...)
	_ = bw.Flush()
	answer := func(id uint32) {
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: []byte{0x88}, EndHeaders: true})
		_ = fr.WriteData(id, true, []byte("hello"))
	}
	n := 0
	var held uint32
	answered := 0 // since the hold
	pending := make([]uint32, 0, 64)
	for {
		if br.Buffered() == 0 {
			open := len(pending)
			if held != 0 {
				open++
			}
			s.mu.Lock()
			all := s.total > 0 && s.received >= s.total
			s.mu.Unlock()
			if open >= s.answerAt || all {
				if len(pending) > 0 && s.delay > 0 {
					time.Sleep(s.delay)
				}
				for _, id := range pending {
					answer(id)
				}
				if held != 0 {
					answered += len(pending)
					s.mu.Lock()
					s.whileHeld = max(s.whileHeld, answered)
					s.mu.Unlock()
					if s.release != nil && (s.release(answered) || all) {
						answer(held)
						held = 0
					}
				}
				pending = pending[:0]
			}
			if err := bw.Flush(); err != nil {
				return
			}
		}
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.DataFrame:
			s.mu.Lock()
			s.bodyBytes += len(f.Data())
			s.mu.Unlock()
			if s.windowBack && f.Length > 0 {
				_ = fr.WriteWindowUpdate(0, f.Length)
			}
			if !f.StreamEnded() {
				continue
			}
			pending = append(pending, f.StreamID)
			s.mu.Lock()
			s.maxOpen = max(s.maxOpen, len(pending))
			s.mu.Unlock()
		case *http2.HeadersFrame:
			if !f.StreamEnded() {
				s.mu.Lock()
				s.received++
				s.mu.Unlock()
				continue // its body follows
			}
			n++
			if held == 0 && s.hold != nil && s.hold(ci, n) {
				held, answered = f.StreamID, 0
			} else {
				pending = append(pending, f.StreamID)
			}
			open := len(pending)
			if held != 0 {
				open++
			}
			s.mu.Lock()
			s.received++
			s.maxOpen = max(s.maxOpen, open)
			s.mu.Unlock()
		}
	}
}

// h2Watch is a tally that checks, at every claim, that the claim tops the
// loop's one connection up to exactly its streams: a stream that ends is
// replaced at once, whatever the others do.
type h2Watch struct {
	*tally
	l       *h2loop
	streams int
	claims  int
	short   int // claims that left the connection below its streams
}

func (w *h2Watch) Claim(n int) (uint64, int) {
	seq, k := w.tally.Claim(n)
	if k > 0 {
		w.claims++
		if c := w.l.conns[0]; c.active()+len(c.resend)+k != w.streams && k == n {
			w.short++
		}
	}
	return seq, k
}

func openH2(t *testing.T, cfg Config, conns int) *h2loop {
	t.Helper()
	l := openLoop(t, cfg, conns)
	hl, ok := l.(*h2loop)
	if !ok {
		t.Fatalf("OpenLoop of HTTP/2: %T, want the HTTP/2 event loop", l)
	}
	return hl
}

// openLoop opens an event loop of conns connections for cfg, closed when
// the test ends.
func openLoop(t *testing.T, cfg Config, conns int) driver.Loop {
	t.Helper()
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.OpenLoop(context.Background(), conns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// With one stream held back by the server, the connection's other
// streams keep flowing: each one that ends is replaced at once. The
// server answers only with all 4 streams open, and 500 others before it
// lets the held one go: refilled per batch, no stream would follow the
// held one's batch and the run would hang (the context's deadline only
// catches that). The connection never has more than its streams open.
func TestH2LoopRefillsPerStream(t *testing.T) {
	const streams = 4
	srv := &h2Canned{
		answerAt: streams,
		total:    2000,
		hold:     func(conn, n int) bool { return n == 2 },
		release:  func(answered int) bool { return answered >= 500 },
	}
	l := openH2(t, Config{URL: srv.start(t), Timeout: 60 * time.Second}, 1)
	w := &h2Watch{tally: newTally(2000), l: l, streams: streams}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := l.Run(ctx, streams, 0, w); err != nil {
		t.Fatalf("run: %v (the streams stopped while one was held?)", err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if w.ok != 2000 || w.failed != 0 || w.badSent != 0 {
		t.Errorf("%d ok, %d failed (%v), %d with a send after completion; want 2000 ok", w.ok, w.failed, w.msgs, w.badSent)
	}
	if srv.whileHeld < 500 {
		t.Errorf("%d streams answered while one was held, want 500", srv.whileHeld)
	}
	if srv.maxOpen != streams || srv.received != 2000 {
		t.Errorf("server saw %d streams, at most %d open at once; want 2000, %d", srv.received, srv.maxOpen, streams)
	}
	if w.short != 0 || w.claims < 2000/streams {
		t.Errorf("%d of %d claims left the connection below %d streams", w.short, w.claims, streams)
	}
}

// The server's SETTINGS_MAX_CONCURRENT_STREAMS bounds the streams in
// flight below --streams.
func TestH2LoopMaxConcurrentStreams(t *testing.T) {
	srv := &h2Canned{maxStreams: 2, answerAt: 2, total: 1000}
	l := openH2(t, Config{URL: srv.start(t), Timeout: 60 * time.Second}, 1)
	w := newTally(1000)
	if err := l.Run(context.Background(), 8, 0, w); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if w.ok != 1000 || srv.maxOpen != 2 {
		t.Errorf("%d ok (%v), at most %d streams open; want 1000 ok, 2", w.ok, w.msgs, srv.maxOpen)
	}
}

// classTally counts outcomes by class, and checks that every claimed
// request is recorded once (a Drained answer aside).
type classTally struct {
	*tally
	classes map[driver.Class]int
	once    int
}

func (w *classTally) Record(o *driver.Outcome, sent int64) {
	w.classes[o.Class]++
	if o.Class == driver.Drained {
		return
	}
	w.once++
	w.tally.Record(o, sent)
}

// At the window's deadline every stream in flight is reported
// Outstanding, the held one among them; the others' answers, read while
// the window drains, are Drained; the connection still waiting for the
// held one is closed after driver.DrainGrace and reopened by the next
// Run, a reconnect of cause driver.CauseWindowEnd.
func TestH2LoopDeadlineOutstanding(t *testing.T) {
	const streams = 3
	srv := &h2Canned{hold: func(conn, n int) bool { return conn == 0 && n == 2 }} // never released, held from the first streams
	l := openH2(t, Config{URL: srv.start(t), Timeout: 60 * time.Second}, 2)
	w := &classTally{tally: newTally(1 << 40), classes: map[driver.Class]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	deadline := driver.Now() + int64(300*time.Millisecond)
	if err := l.Run(ctx, streams, deadline, w); err != nil {
		t.Fatal(err)
	}
	out, drained, ok := w.classes[driver.Outstanding], w.classes[driver.Drained], w.classes[driver.OK]
	if out < 1 || out > 2*streams || drained > out-1 {
		t.Errorf("%d outstanding, %d drained: want 1–%d outstanding (the held stream among them), fewer drained", out, drained, 2*streams)
	}
	if uint64(w.once) != w.next || ok+out != w.once {
		t.Errorf("%d claimed, %d recorded once (%v): every request once, ok or outstanding", w.next, w.once, w.classes)
	}
	srv.mu.Lock()
	received := srv.received
	srv.mu.Unlock()
	if received != w.once {
		t.Errorf("server received %d streams, %d requests recorded", received, w.once)
	}
	if c := l.conns[0]; c.st != evloop.Down || c.cause != driver.CauseWindowEnd {
		t.Errorf("connection with the held stream: state %d cause %q, want closed for %q", c.st, c.cause, driver.CauseWindowEnd)
	}
	next := newTally(100)
	if err := l.Run(ctx, streams, 0, next); err != nil {
		t.Fatal(err)
	}
	if next.ok != 100 || next.causes[driver.CauseWindowEnd] != 1 {
		t.Errorf("next run: %d ok, reconnects %v; want 100 ok, one %q", next.ok, next.causes, driver.CauseWindowEnd)
	}
}

// HTTP/2 on the loop allocates nothing per request either, h2c and over
// TLS (ALPN h2; crypto/tls's record reader left out, as for HTTP/1.1).
func TestH2LoopZeroAllocsPerRequest(t *testing.T) {
	t.Run("h2c", func(t *testing.T) {
		srv := &h2Canned{}
		l := openH2(t, Config{URL: srv.start(t)}, 2)
		perRequestAllocs(t, l, 8, "")
	})
	t.Run("tls", func(t *testing.T) {
		srv := &h2Canned{}
		addr := strings.TrimSuffix(strings.TrimPrefix(srv.start(t), "h2c://"), "/")
		cert := validCert(t, "h2alloc")
		front := tlsFront(t, cert, ProtoH2, addr)
		l := openH2(t, Config{URL: "https://" + front + "/", HTTP2: true, TLS: &TLSConfig{CACert: cert.CertFile}}, 2)
		perRequestAllocs(t, l, 8, "crypto/tls.(*Conn).readFromUntil")
	})
}

// flowWatch is a tally that checks the connection's send window at every
// outcome: never below 0, and whether requests were held for it.
type flowWatch struct {
	*tally
	l        *h2loop
	negative int
	held     int
}

func (w *flowWatch) Record(o *driver.Outcome, sent int64) {
	c := w.l.conns[0]
	if c.sendWindow < 0 {
		w.negative++
	}
	if len(c.resend) > 0 && c.st == evloop.Open {
		w.held++
	}
	w.tally.Record(o, sent)
}

// Request bodies that overrun the server's connection window (65,535
// bytes: 8 streams of 20,000) wait for its WINDOW_UPDATEs: every request
// is answered, every body byte arrives, the window never goes below 0.
func TestH2LoopBodiesWaitForTheWindow(t *testing.T) {
	srv := &h2Canned{windowBack: true}
	body := strings.Repeat("b", 20000)
	l := openH2(t, Config{URL: srv.start(t), Method: "POST", Body: body, Timeout: 60 * time.Second}, 1)
	w := &flowWatch{tally: newTally(200), l: l}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := l.Run(ctx, 8, 0, w); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if w.ok != 200 || srv.bodyBytes != 200*len(body) || w.negative != 0 || w.held == 0 {
		t.Errorf("%d ok (%v), server read %d body bytes, window negative %d times, requests held at %d outcomes; want 200, %d, 0, some",
			w.ok, w.msgs, srv.bodyBytes, w.negative, w.held, 200*len(body))
	}
}

// A stream the server never answers times out (Config.Timeout from its
// send); the connection is replaced, as the HTTP/1.1 loop replaces one,
// its other streams failed with it, and the run goes on to its count.
func TestH2LoopStreamTimeout(t *testing.T) {
	srv := &h2Canned{hold: func(conn, n int) bool { return conn == 0 && n == 1 }} // never released
	l := openH2(t, Config{URL: srv.start(t), Timeout: 200 * time.Millisecond}, 1)
	w := newTally(300)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := l.Run(ctx, 3, 0, w); err != nil {
		t.Fatal(err)
	}
	timeouts := w.msgs["timeout: timeout"]
	if timeouts < 1 || timeouts > 3 || w.ok+timeouts != 300 || w.badSent != 0 {
		t.Errorf("%d ok, %v; want 1–3 timeouts (the held stream's connection), the rest ok", w.ok, w.msgs)
	}
	// replaced: at once when the run goes on, else by the next Run
	next := newTally(10)
	if err := l.Run(ctx, 3, 0, next); err != nil {
		t.Fatal(err)
	}
	if next.ok != 10 || w.causes[driver.CauseError]+next.causes[driver.CauseError] != 1 {
		t.Errorf("next run: %d ok, reconnects %v then %v; want 10 ok, one %q", next.ok, w.causes, next.causes, driver.CauseError)
	}
}
