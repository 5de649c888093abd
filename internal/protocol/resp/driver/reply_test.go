package resp

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	wire "github.com/benchrig/benchrig/internal/resp"
	"github.com/benchrig/benchrig/internal/resp/resptest"
)

// Reply checking: unexpected replies, limits and validation against a
// reference.

// cannedServer answers the n-th command it receives on a connection with
// replies[n] (raw RESP), after answering the opening PING.
func cannedServer(t *testing.T, replies ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				nc.SetDeadline(time.Now().Add(20 * time.Second))
				rd := wire.NewReader(nc, wire.Limits{})
				var args [][]byte
				for n := -1; n < len(replies); n++ {
					if args, err = rd.ReadCommand(args); err != nil {
						return
					}
					reply := "+PONG\r\n"
					if n >= 0 {
						reply = replies[n]
					}
					if _, err := nc.Write([]byte(reply)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestUnexpectedReplies(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		reply string
		class driver.Class
		msg   string
	}{
		{"MGET short", Config{Batch: 3}, "*2\r\n$1\r\na\r\n$-1\r\n", driver.Unexpected, "MGET reply has 2 elements, want 3"},
		{"MGET not array", Config{Batch: 2}, "$1\r\na\r\n", driver.Unexpected, msgMGETNotArray},
		{"MGET nil array", Config{Batch: 2}, "*-1\r\n", driver.Unexpected, msgMGETNotArray},
		{"MGET int element", Config{Batch: 2}, "*2\r\n:1\r\n$1\r\nb\r\n", driver.Unexpected, msgMGETElement},
		{"MGET nested element", Config{Batch: 2}, "*2\r\n*1\r\n:1\r\n$1\r\nb\r\n", driver.Unexpected, msgMGETElement},
		{"GET array", Config{Command: "GET"}, "*2\r\n*1\r\n:1\r\n$1\r\nb\r\n", driver.Unexpected, msgGETNotBulk},
		{"SET not OK", Config{Command: "SET"}, "+QUEUED\r\n", driver.Unexpected, msgSETNotOK},
		{"WRONGTYPE", Config{Command: "GET"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", driver.Error, "WRONGTYPE"},
		{"lower-case error", Config{Command: "GET"}, "-oops\r\n", driver.Error, msgServerError},
		{"custom array", Config{Args: []string{"LRANGE", "{key}", "0", "-1"}}, "*2\r\n*0\r\n$-1\r\n", driver.OK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The canned reply, then a PONG that proves the stream is in step.
			tt.cfg.Addr = cannedServer(t, tt.reply, "+OK\r\n")
			if tt.cfg.Command == "" && len(tt.cfg.Args) == 0 {
				tt.cfg.Command = "MGET"
			}
			d := newDriver(t, tt.cfg)
			c := open(t, d)
			out, err := do(t, c, 0)
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
			if out[0].Class != tt.class || out[0].Msg != tt.msg {
				t.Fatalf("got %v %q, want %v %q", out[0].Class, out[0].Msg, tt.class, tt.msg)
			}
			if out[0].Bytes != int64(len(tt.reply)) {
				t.Fatalf("Bytes = %d, want the whole reply, %d", out[0].Bytes, len(tt.reply))
			}
			// The next reply is read cleanly: the connection stayed in step.
			cc := c.(*conn)
			rep, err := cc.sendRaw("SET", "k", "v")
			if err != nil || string(rep.Data) != "OK" {
				t.Fatalf("after the unexpected reply: %+v, %v", rep, err)
			}
		})
	}
}

// sendRaw sends one command and reads one reply element, for tests.
func (c *conn) sendRaw(args ...string) (wire.Reply, error) {
	if _, err := c.nc.Write(wire.AppendCommandString(nil, args...)); err != nil {
		return wire.Reply{}, err
	}
	return c.rd.ReadReply()
}

func TestReplyOverLimit(t *testing.T) {
	addr := cannedServer(t, "$100\r\n")
	d := newDriver(t, Config{Addr: addr, Command: "GET", Limits: wire.Limits{MaxBulk: 10}})
	out, err := do(t, open(t, d), 0)
	if !errors.Is(err, wire.ErrLimit) || out[0].Msg != "reply over limit (bulk string longer than limits.max_bulk=10)" {
		t.Fatalf("got %v, %q", err, out[0].Msg)
	}
}

// A reference that disagrees with the server must be caught, so validation
// is not vacuous.
func TestValidation(t *testing.T) {
	srv := startTestServer(t, resptest.Options{})
	srv.Set("item:1", []byte("one"))
	srv.Set("item:2", []byte("two"))
	good := map[int64]string{1: "one", 2: "two"}
	ref := func(m map[int64]string) func(int64) ([]byte, bool) {
		return func(k int64) ([]byte, bool) {
			v, ok := m[k]
			return []byte(v), ok
		}
	}
	d := newDriver(t, Config{Addr: srv.Addr(), Batch: 3, KeySpace: 3, ValidateSampled: 1, Reference: ref(good)})
	mustOK(t, open(t, d), 0, 1)
	if st := d.Stats(); st.Validated != 6 || st.Mismatches != 0 {
		t.Fatalf("validated %d mismatches %d, want 6 and 0", st.Validated, st.Mismatches)
	}
	for name, tc := range map[string]struct {
		m    map[int64]string
		want string
	}{
		"value differs":  {map[int64]string{1: "one", 2: "TWO"}, msgValueMismatch},
		"expected a nil": {map[int64]string{1: "one"}, msgUnexpectedHit},
		"expected a hit": {map[int64]string{1: "one", 2: "two", 3: "three"}, msgUnexpectedNil},
	} {
		d := newDriver(t, Config{Addr: srv.Addr(), Batch: 3, KeySpace: 3, ValidateSampled: 1, Reference: ref(tc.m)})
		out, err := do(t, open(t, d), 0)
		if err != nil {
			t.Fatal(err)
		}
		if out[0].Class != driver.Unexpected || out[0].Msg != tc.want {
			t.Errorf("%s: %v %q, want unexpected %q", name, out[0].Class, out[0].Msg, tc.want)
		}
		if d.Stats().Mismatches != 1 {
			t.Errorf("%s: mismatches %d, want 1", name, d.Stats().Mismatches)
		}
	}
}
