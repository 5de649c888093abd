package http

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
)

// modes are the two ways the engine drives the driver: a closed loop on
// the event loops, and a constant rate on a goroutine per connection
// (net.Conn and the bufio parser). A failed connection is reopened after a
// pause that doubles (driver.Backoff): hostile servers get few requests.
var modes = []struct {
	name string
	lc   load.Config
}{
	{"closed", load.Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1}}},
	{"rate", load.Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1, Rate: 2000}}},
}

// Framing violations are errors counted by message in both modes, never
// "0 errors" with reconnects (issue 17, item 2).
func TestHostileServersFramingErrors(t *testing.T) {
	cases := []struct {
		name string
		msg  string
		fn   func(c net.Conn, br *bufio.Reader, n int) bool
	}{
		{"extra body bytes", "error: unsolicited bytes on idle connection",
			func(c net.Conn, _ *bufio.Reader, n int) bool {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhello\n")
				return true
			}},
		{"conflicting Content-Length", "error: conflicting Content-Length",
			func(c net.Conn, _ *bufio.Reader, n int) bool {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 6\r\n\r\nhello\n")
				return true
			}},
		{"Content-Length with chunked", "error: Content-Length with chunked Transfer-Encoding",
			func(c net.Conn, _ *bufio.Reader, n int) bool {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
				return true
			}},
		{"unsolicited second response", "error: unsolicited bytes on idle connection",
			func(c net.Conn, _ *bufio.Reader, n int) bool {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				// a second response later, when no request is outstanding
				time.Sleep(20 * time.Millisecond)
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				return true
			}},
	}
	for _, tc := range cases {
		for _, m := range modes {
			t.Run(tc.name+"/"+m.name, func(t *testing.T) {
				url := rawServer(t, tc.fn)
				res, err := runEngine(t, Config{URL: url, Timeout: 2 * time.Second}, m.lc, load.Window{Requests: 12, Duration: 10 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				if res.Errors == 0 || res.Messages[tc.msg] == 0 || res.Messages[tc.msg] != res.Errors {
					t.Errorf("%d ok, %d errors, want every error %q: %v (reconnects %v)", res.Requests, res.Errors, tc.msg, res.Messages, res.ReconnectCauses)
				}
				if tc.name != "unsolicited second response" && res.Requests != 0 {
					// every response of these servers is bad
					t.Errorf("%d responses accepted from a server whose every response violates framing", res.Requests)
				}
				if got := res.ReconnectCauses[driver.CauseError]; got == 0 {
					t.Errorf("no reconnect after the errors: %v", res.ReconnectCauses)
				}
			})
		}
	}
}

// A POST the server closed the reused connection on, before any byte of
// its response: not sent again unless RetryUnsafe, in both modes.
func TestPOSTNotResentUnlessRetryUnsafe(t *testing.T) {
	// each connection answers its first request and closes on the second
	url := func(t *testing.T) string {
		return rawServer(t, func(c net.Conn, br *bufio.Reader, n int) bool {
			// the request head was read; read the 2-byte body too
			if _, err := io.ReadFull(br, make([]byte, 2)); err != nil {
				return false
			}
			if n == 2 {
				return false
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			return true
		})
	}
	for _, m := range modes {
		lc := m.lc
		lc.Connections = 1
		t.Run(m.name, func(t *testing.T) {
			cfg := Config{URL: url(t), Method: "POST", Body: "hi", Timeout: 2 * time.Second}
			res, err := runEngine(t, cfg, lc, load.Window{Requests: 20, Duration: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != 10 || res.Errors != 10 || res.Messages["error: connection closed by server"] != 10 || res.Resent != 0 {
				t.Errorf("POST: %d ok, %d errors, %d re-sent, want 10/10/0: %v", res.Requests, res.Errors, res.Resent, res.Messages)
			}
			cfg.URL, cfg.RetryUnsafe = url(t), true
			res, err = runEngine(t, cfg, lc, load.Window{Requests: 20, Duration: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			// 20 requests, one answered per connection after the first
			if res.Requests != 20 || res.Errors != 0 || res.Resent != 19 || res.ReconnectCauses[driver.CauseIdleClosed] != 19 {
				t.Errorf("POST with RetryUnsafe: %d ok, %d errors, %d re-sent, causes %v: %v", res.Requests, res.Errors, res.Resent, res.ReconnectCauses, res.Messages)
			}
		})
	}
}
