//go:build linux

package http

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	stdhttp "net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
)

// tally is a driver.LoopWork that hands out up to limit requests and counts
// outcomes by class and message.
type tally struct {
	next, limit          uint64
	ok, failed, reopened int
	seen                 map[uint64]bool
	msgs                 map[string]int
	causes               map[string]int
	resent               int
	badSent              int
}

func newTally(limit uint64) *tally {
	return &tally{limit: limit, seen: map[uint64]bool{}, msgs: map[string]int{}, causes: map[string]int{}}
}

func (w *tally) Claim(n int) (uint64, int) {
	if w.next >= w.limit {
		return 0, 0
	}
	n = int(min(uint64(n), w.limit-w.next))
	seq := w.next
	w.next += uint64(n)
	return seq, n
}

func (w *tally) Record(o *driver.Outcome, sent int64) {
	if sent <= 0 || o.Done < sent {
		w.badSent++
	}
	if o.Class == driver.OK {
		w.ok++
		return
	}
	w.failed++
	w.msgs[o.Class.String()+": "+o.Msg]++
}

func (w *tally) Reconnected(cause string, resent int) {
	w.reopened++
	w.causes[cause]++
	w.resent += resent
}

// runLoop opens a loop of conns connections on url and runs it until limit
// requests were recorded.
func runLoop(t *testing.T, cfg Config, conns, pipeline int, limit uint64) *tally {
	t.Helper()
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := d.OpenLoop(ctx, conns)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	w := newTally(limit)
	if err := l.Run(ctx, pipeline, 0, w); err != nil {
		t.Fatal(err)
	}
	if got := uint64(w.ok + w.failed); got != limit {
		t.Errorf("recorded %d outcomes, want %d", got, limit)
	}
	if w.badSent != 0 {
		t.Errorf("%d outcomes with a send time after their completion", w.badSent)
	}
	return w
}

func TestLoopExactCountWithPipelining(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(stdhttp.HandlerFunc(func(w stdhttp.ResponseWriter, r *stdhttp.Request) {
		hits.Add(1)
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()
	for _, pipe := range []int{1, 7} {
		hits.Store(0)
		w := runLoop(t, Config{URL: srv.URL, Timeout: 5 * time.Second}, 3, pipe, 1001)
		if w.ok != 1001 || hits.Load() != 1001 {
			t.Errorf("pipeline %d: %d ok, server saw %d, want 1001 (%v)", pipe, w.ok, hits.Load(), w.msgs)
		}
	}
}

func TestLoopCloseAfterEachResponse(t *testing.T) {
	url := rawServer(t, func(c net.Conn, _ *bufio.Reader, n int) bool {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
		return false
	})
	w := runLoop(t, Config{URL: url}, 2, 1, 40)
	if w.ok != 40 || w.reopened < 38 {
		t.Errorf("connection: close: %d ok, %d reopened, %v", w.ok, w.reopened, w.msgs)
	}
	// a body that runs to the end of the connection
	url = rawServer(t, func(c net.Conn, _ *bufio.Reader, n int) bool {
		io.WriteString(c, "HTTP/1.0 200 OK\r\n\r\nuntil the end")
		return false
	})
	want := "until the end"
	w = runLoop(t, Config{URL: url, ExpectBody: &want}, 2, 1, 20)
	if w.ok != 20 {
		t.Errorf("read to close: %d ok, %v", w.ok, w.msgs)
	}
}

func TestLoopAbruptCloseCounted(t *testing.T) {
	// closed before a byte of the 3rd response: re-sent, not an error (each
	// connection answers 2: 15 connections, 14 re-sends)
	url := rawServer(t, func(c net.Conn, _ *bufio.Reader, n int) bool {
		if n%3 == 0 {
			return false
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	w := runLoop(t, Config{URL: url}, 1, 1, 30)
	if w.ok != 30 || w.resent != 14 || w.causes[driver.CauseIdleClosed] != 14 {
		t.Errorf("close before the response: %d ok, %d resent, causes %v, %v", w.ok, w.resent, w.causes, w.msgs)
	}
	// closed inside the 3rd response: an error
	url = rawServer(t, func(c net.Conn, _ *bufio.Reader, n int) bool {
		if n%3 == 0 {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Le")
			return false
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	w = runLoop(t, Config{URL: url}, 1, 1, 30)
	if w.ok != 20 || w.msgs["error: connection closed by server"] != 10 || w.causes[driver.CauseError] != 10 {
		t.Errorf("abrupt close mid-response: %d ok, %v, causes %v", w.ok, w.msgs, w.causes)
	}
}

func TestLoopTimeoutCounted(t *testing.T) {
	var total atomic.Int64
	url := rawServer(t, func(c net.Conn, _ *bufio.Reader, n int) bool {
		if total.Add(1) == 2 {
			time.Sleep(300 * time.Millisecond)
			return false
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	w := runLoop(t, Config{URL: url, Timeout: 100 * time.Millisecond}, 1, 1, 5)
	if w.ok != 4 || w.msgs["timeout: timeout"] != 1 || w.reopened != 1 {
		t.Errorf("timeout: %d ok, %d reopened, %v", w.ok, w.reopened, w.msgs)
	}
}

func TestLoopChunkedWithBodyCheck(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(stdhttp.HandlerFunc(func(w stdhttp.ResponseWriter, r *stdhttp.Request) {
		f := w.(stdhttp.Flusher)
		fmt.Fprint(w, "part one,")
		f.Flush() // forces chunked encoding
		if n.Add(1)%5 == 0 {
			fmt.Fprint(w, "part 2")
			return
		}
		fmt.Fprint(w, "part two")
	}))
	defer srv.Close()
	want := "part one,part two"
	w := runLoop(t, Config{URL: srv.URL, ExpectBody: &want}, 2, 4, 200)
	if w.ok != 160 || w.msgs["unexpected: body differs from the expected body"] != 40 {
		t.Errorf("chunked: %d ok, %v", w.ok, w.msgs)
	}
}

func TestLoopMalformedAndRefused(t *testing.T) {
	url := rawServer(t, func(c net.Conn, _ *bufio.Reader, n int) bool {
		io.WriteString(c, "-ERR unknown command 'GET'\r\n")
		return true
	})
	w := runLoop(t, Config{URL: url}, 1, 1, 3)
	if w.msgs["error: malformed response"] != 3 {
		t.Errorf("non-HTTP peer: %v", w.msgs)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	d, _ := New(Config{URL: "http://" + addr + "/"})
	if _, err := d.OpenLoop(context.Background(), 2); err == nil || !contains(err.Error(), "connection refused") {
		t.Errorf("refused: %v", err)
	}
}

func TestLoopCancelAndClose(t *testing.T) {
	url := rawServer(t, func(c net.Conn, _ *bufio.Reader, n int) bool {
		time.Sleep(time.Second) // never in time
		return false
	})
	d, _ := New(Config{URL: url})
	l, err := d.OpenLoop(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = l.Run(ctx, 1, 0, newTally(1<<40))
	if err != context.DeadlineExceeded || time.Since(start) > 5*time.Second {
		t.Errorf("cancel: %v after %s", err, time.Since(start))
	}
	if err := l.Close(); err != nil {
		t.Error(err)
	}
	if err := l.Close(); err != nil {
		t.Error("second Close:", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// A re-sent request that the new connection never answers times out from
// its first send: the loop does not wait for it forever.
func TestLoopResentRequestTimesOut(t *testing.T) {
	var conns atomic.Int64
	url := rawServer(t, func(c net.Conn, _ *bufio.Reader, n int) bool {
		if conns.Load() == 0 && n == 1 {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			return true
		}
		if conns.Add(1) == 1 {
			return false // the 2nd request: closed before a byte of response
		}
		time.Sleep(time.Second) // the re-sent request: never answered in time
		return false
	})
	w := runLoop(t, Config{URL: url, Timeout: 200 * time.Millisecond}, 1, 1, 2)
	if w.ok != 1 || w.msgs["timeout: timeout"] != 1 || w.resent != 1 {
		t.Errorf("%d ok, %d re-sent, %v", w.ok, w.resent, w.msgs)
	}
}

// A server answering with the same bytes most of the time: the loop
// compares them with the last response instead of parsing (lconn.fixed),
// and counts exactly what parsing counts when they change (a 503 every
// 5th, another body every 7th), pipelined or not.
func TestLoopFixedResponses(t *testing.T) {
	const a = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
	url := rawServer(t, func(c net.Conn, _ *bufio.Reader, n int) bool {
		switch {
		case n%5 == 0:
			io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy")
		case n%7 == 0:
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello!")
		default:
			io.WriteString(c, a)
		}
		return true
	})
	for _, pipe := range []int{1, 4} {
		d, err := New(Config{URL: url, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		l, err := d.OpenLoop(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		w := newTally(699)
		if err := l.Run(ctx, pipe, 0, w); err != nil {
			t.Fatal(err)
		}
		// n counts from 1 on the one connection: 139 multiples of 5
		if w.ok != 560 || w.msgs["unexpected: status 503"] != 139 || w.failed != 139 {
			t.Errorf("pipeline %d: %d ok, %v; want 560 ok, 139 × status 503", pipe, w.ok, w.msgs)
		}
		t.Logf("pipeline %d: kept %q", pipe, l.(*loop).conns[0].fixed)
		if got := string(l.(*loop).conns[0].fixed); got != a {
			t.Errorf("pipeline %d: last response kept to compare %q, want %q", pipe, got, a)
		}
		l.Close()
		cancel()
	}
}
