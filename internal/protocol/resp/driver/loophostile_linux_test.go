//go:build linux

package resp

import (
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	wire "github.com/benchrig/benchrig/internal/resp"
)

// The event loop against fake servers: replies split, cut, oversized,
// late or unasked for.

// fakeServer answers PING with +PONG and hands every other command to
// serve with the connection's index (in accept order) and the command's
// number on it; serve writes what it likes and returns false to close.
func fakeServer(t *testing.T, serve func(nc net.Conn, conn, n int, args [][]byte) bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for conn := 0; ; conn++ {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				nc.SetDeadline(time.Now().Add(20 * time.Second))
				rd := wire.NewReader(nc, wire.Limits{})
				var args [][]byte
				for n := 0; ; {
					if args, err = rd.ReadCommand(args); err != nil {
						return
					}
					if strings.EqualFold(string(args[0]), "PING") {
						nc.Write([]byte("+PONG\r\n"))
						continue
					}
					if !serve(nc, conn, n, args) {
						return
					}
					n++
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// trickle writes s a byte at a time, each in its own segment.
func trickle(nc net.Conn, s string) {
	for i := range len(s) {
		nc.Write([]byte{s[i]})
		time.Sleep(200 * time.Microsecond)
	}
}

// Replies that arrive a byte at a time are put together: a GET's bulk
// string, a pipelined batch of them, an MGET's array with a nil.
func TestLoopSplitReplies(t *testing.T) {
	addr := fakeServer(t, func(nc net.Conn, _, _ int, args [][]byte) bool {
		if string(args[0]) == "MGET" {
			trickle(nc, "*2\r\n$5\r\nhello\r\n$-1\r\n")
		} else {
			trickle(nc, "$5\r\nhello\r\n")
		}
		return true
	})
	d := newDriver(t, Config{Addr: addr, Command: CommandGET})
	w := runLoop(t, d, 2, 4, 12)
	for _, o := range w.outs {
		if o.Class != driver.OK || o.Bytes != 11 {
			t.Fatalf("outcome %+v, want OK of 11 bytes", o)
		}
	}
	d = newDriver(t, Config{Addr: addr, Batch: 2})
	w = runLoop(t, d, 1, 3, 6)
	for _, o := range w.outs {
		if o.Class != driver.Miss || o.Bytes != 20 {
			t.Fatalf("outcome %+v, want a miss of 20 bytes", o)
		}
	}
	if st := d.Stats(); st.Hits != 6 || st.Nils != 6 {
		t.Fatalf("stats %+v, want 6 hits and 6 nils", st)
	}
}

// A server that closes the connection mid-reply, or before replying, fails
// the requests outstanding with the goroutine path's messages; the loop
// reopens the connection and goes on.
func TestLoopServerClosesReconnects(t *testing.T) {
	for _, tc := range []struct{ partial, msg string }{
		{"$5\r\nhel", "connection closed mid-reply"},
		{"", "connection closed by peer"},
	} {
		t.Run(tc.msg, func(t *testing.T) {
			addr := fakeServer(t, func(nc net.Conn, conn, n int, _ [][]byte) bool {
				if conn == 0 && n == 1 {
					nc.Write([]byte(tc.partial))
					return false
				}
				nc.Write([]byte("$5\r\nhello\r\n"))
				return true
			})
			d := newDriver(t, Config{Addr: addr, Command: CommandGET})
			w := runLoop(t, d, 1, 1, 6)
			if cl := w.classes(); cl[driver.OK] != 5 || cl[driver.Error] != 1 {
				t.Fatalf("outcomes %v, want 5 OK and 1 error", cl)
			}
			if o := w.outs[1]; o.Class != driver.Error || o.Msg != tc.msg {
				t.Fatalf("second outcome %v %q, want error %q", o.Class, o.Msg, tc.msg)
			}
			if len(w.causes) != 1 || w.causes[0] != driver.CauseError {
				t.Fatalf("reconnects %q, want one after the error", w.causes)
			}
		})
	}
}

// A hostile length (a bulk string or an array larger than the limits) is
// refused, naming the limit, without allocating anything of its size; the
// connection is replaced.
func TestLoopRefusesOversizedReplies(t *testing.T) {
	for _, tc := range []struct{ reply, msg string }{
		{"$999999999999\r\n", "reply over limit (bulk string longer than limits.max_bulk=67108864)"},
		{"$1025\r\n", "reply over limit (bulk string longer than limits.max_bulk=1024)"},
		{"*2000000\r\n", "reply over limit (array longer than limits.max_array=1048576)"},
		{"+" + strings.Repeat("x", 70000), "reply over limit (line longer than limits.max_line=65536)"},
	} {
		t.Run(tc.msg, func(t *testing.T) {
			addr := fakeServer(t, func(nc net.Conn, conn, n int, _ [][]byte) bool {
				if conn == 0 && n == 0 {
					nc.Write([]byte(tc.reply))
					time.Sleep(100 * time.Millisecond) // no close: the limit ends it
					return false
				}
				nc.Write([]byte("$2\r\nok\r\n"))
				return true
			})
			cfg := Config{Addr: addr, Command: CommandGET}
			if strings.Contains(tc.msg, "=1024") {
				cfg.Limits.MaxBulk = 1024
			}
			d := newDriver(t, cfg)
			var ms0, ms1 runtimeMem
			ms0.read()
			w := runLoop(t, d, 1, 1, 3)
			ms1.read()
			if o := w.outs[0]; o.Class != driver.Error || o.Msg != tc.msg {
				t.Fatalf("first outcome %v %q, want error %q", o.Class, o.Msg, tc.msg)
			}
			if cl := w.classes(); cl[driver.OK] != 2 || len(w.causes) != 1 {
				t.Fatalf("outcomes %v, reconnects %q: want the others OK after a reconnect", cl, w.causes)
			}
			if grew := ms1.total - ms0.total; grew > 8<<20 {
				t.Fatalf("%d bytes allocated for a refused reply", grew)
			}
		})
	}
}

// A request that outlives Timeout is a timeout, as on the goroutine path.
func TestLoopTimeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	addr := fakeServer(t, func(nc net.Conn, conn, _ int, _ [][]byte) bool {
		if conn == 0 {
			<-release // stall, but never past the test
			return false
		}
		nc.Write([]byte("$2\r\nok\r\n"))
		return true
	})
	d := newDriver(t, Config{Addr: addr, Command: CommandGET, Timeout: 100 * time.Millisecond})
	w := runLoop(t, d, 1, 2, 4)
	for i, o := range w.outs[:2] {
		if o.Class != driver.Timeout || o.Msg != "timeout" {
			t.Fatalf("outcome %d %v %q, want timeout", i, o.Class, o.Msg)
		}
	}
	if cl := w.classes(); cl[driver.OK] != 2 {
		t.Fatalf("outcomes %v, want the batch after the reconnect OK", cl)
	}
}

// Bytes after the batch's last reply answer no request: an error, and the
// connection is replaced. The server answers each command three times in
// one write, so the extra replies arrive with the batch's own whatever the
// loop's timing (epoll or io_uring).
func TestLoopUnsolicitedBytes(t *testing.T) {
	addr := fakeServer(t, func(nc net.Conn, _, _ int, _ [][]byte) bool {
		_, err := nc.Write([]byte("$2\r\nok\r\n$2\r\nok\r\n$2\r\nok\r\n"))
		return err == nil
	})
	d := newDriver(t, Config{Addr: addr, Command: CommandGET})
	w := runLoop(t, d, 1, 2, 8)
	for i, o := range w.outs {
		if o.Class != driver.OK && (o.Class != driver.Error || o.Msg != msgUnsolicited) {
			t.Fatalf("outcome %d: %v %q", i, o.Class, o.Msg)
		}
	}
	if cl := w.classes(); cl[driver.Error] == 0 {
		t.Fatalf("outcomes %v: want the replies with no request outstanding counted", cl)
	}
	if len(w.causes) == 0 {
		t.Fatal("no reconnect after replies with no request outstanding")
	}
}

// runtimeMem is the process's allocations so far.
type runtimeMem struct{ total uint64 }

func (m *runtimeMem) read() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.total = ms.TotalAlloc
}
