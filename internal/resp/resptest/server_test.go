package resptest_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/resp"
	"github.com/benchrig/benchrig/internal/resp/resptest"
)

// client is a minimal test client: send commands, read whole replies.
type client struct {
	t    *testing.T
	conn net.Conn
	rd   *resp.Reader
}

func dial(t *testing.T, srv *resptest.Server, tlsConf *tls.Config) *client {
	t.Helper()
	var conn net.Conn
	var err error
	if tlsConf != nil {
		conn, err = tls.Dial("tcp", srv.Addr(), tlsConf)
	} else {
		conn, err = net.Dial("tcp", srv.Addr())
	}
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn, rd: resp.NewReader(conn, resp.Limits{})}
}

func (c *client) send(args ...string) {
	c.t.Helper()
	if _, err := c.conn.Write(resp.AppendCommandString(nil, args...)); err != nil {
		c.t.Fatal(err)
	}
}

// reply reads one whole reply and renders it: "+OK", "-ERR …", ":1",
// "$hello", "$nil", "[$a $nil]".
func (c *client) reply() (string, error) {
	rep, err := c.rd.ReadReply()
	if err != nil {
		return "", err
	}
	switch rep.Kind {
	case resp.KindInt:
		return ":" + strconv.FormatInt(rep.Int, 10), nil
	case resp.KindBulk:
		if rep.Nil {
			return "$nil", nil
		}
	case resp.KindArray:
		if rep.Nil {
			return "*nil", nil
		}
		var b bytes.Buffer
		b.WriteByte('[')
		for i := 0; i < rep.Len; i++ {
			s, err := c.reply()
			if err != nil {
				return "", err
			}
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(s)
		}
		b.WriteByte(']')
		return b.String(), nil
	}
	return string(rep.Kind) + string(rep.Data), nil
}

func (c *client) do(want string, args ...string) {
	c.t.Helper()
	c.send(args...)
	got, err := c.reply()
	if err != nil {
		c.t.Fatalf("%q: %v", args, err)
	}
	if got != want {
		c.t.Fatalf("%q: got %q, want %q", args, got, want)
	}
}

func start(t *testing.T, opts resptest.Options) *resptest.Server {
	t.Helper()
	srv, err := resptest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func TestCommands(t *testing.T) {
	srv := start(t, resptest.Options{})
	srv.Set("a", []byte("1"))
	c := dial(t, srv, nil)
	c.do("+PONG", "PING")
	c.do("$hi", "ping", "hi")
	c.do("$1", "GET", "a")
	c.do("$nil", "GET", "missing")
	c.do("+OK", "SET", "b", "two")
	c.do("[$1 $nil $two $1]", "MGET", "a", "x", "b", "a")
	c.do(":1", "INCR", "n")
	c.do(":2", "INCR", "n")
	c.do(":2", "DEL", "n", "b", "zz")
	c.do("-ERR unknown command 'FLY'", "FLY")
	c.do("-ERR wrong number of arguments for 'get' command", "GET")
	c.do("-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?", "AUTH", "x")
	if got := srv.Commands(); got != 12 {
		t.Fatalf("Commands() = %d, want 12", got)
	}
}

func TestPipelining(t *testing.T) {
	srv := start(t, resptest.Options{})
	c := dial(t, srv, nil)
	var buf []byte
	const n = 500
	for i := 0; i < n; i++ {
		buf = resp.AppendCommandString(buf, "INCR", "counter")
	}
	if _, err := c.conn.Write(buf); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		got, err := c.reply()
		if err != nil {
			t.Fatal(err)
		}
		if want := ":" + strconv.Itoa(i); got != want {
			t.Fatalf("reply %d: got %q, want %q", i, got, want)
		}
	}
}

func TestPassword(t *testing.T) {
	srv := start(t, resptest.Options{Password: "s3cret"})
	c := dial(t, srv, nil)
	c.do("-NOAUTH Authentication required.", "GET", "a")
	c.do("-WRONGPASS invalid username-password pair or user is disabled.", "AUTH", "nope")
	c.do("-WRONGPASS invalid username-password pair or user is disabled.", "AUTH", "alice", "s3cret")
	c.do("+OK", "AUTH", "default", "s3cret")
	c.do("+PONG", "PING")
	c2 := dial(t, srv, nil)
	c2.do("+OK", "AUTH", "s3cret")
	c2.do("$nil", "GET", "a")
}

func TestTLS(t *testing.T) {
	srv := start(t, resptest.Options{TLS: true})
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(srv.CertPEM()) {
		t.Fatal("CertPEM is not a PEM certificate")
	}
	c := dial(t, srv, &tls.Config{RootCAs: pool, ServerName: "localhost"})
	c.do("+PONG", "PING")

	// Without trusting the certificate the handshake fails.
	conn, err := tls.Dial("tcp", srv.Addr(), &tls.Config{ServerName: "localhost"})
	if err == nil {
		conn.Close()
		t.Fatal("TLS handshake with an untrusted self-signed certificate succeeded")
	}
}

func TestCloseMidReply(t *testing.T) {
	srv := start(t, resptest.Options{Hook: func(args [][]byte) resptest.Action {
		if string(args[0]) == "MGET" {
			return resptest.CloseMidReply
		}
		return resptest.Serve
	}})
	srv.Set("a", bytes.Repeat([]byte("x"), 100))
	c := dial(t, srv, nil)
	c.do("+PONG", "PING")
	c.send("MGET", "a", "a", "a")
	_, err := c.reply()
	if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, net.ErrClosed) {
		var op *net.OpError
		if !errors.As(err, &op) { // a reset is also acceptable
			t.Fatalf("got %v, want a connection closed mid-reply", err)
		}
	}
}

func TestCloseConn(t *testing.T) {
	srv := start(t, resptest.Options{Hook: func(args [][]byte) resptest.Action {
		if string(args[0]) == "GET" {
			return resptest.CloseConn
		}
		return resptest.Serve
	}})
	c := dial(t, srv, nil)
	c.send("GET", "a")
	if _, err := c.reply(); err == nil {
		t.Fatal("reply after the server closed the connection")
	}
}

func TestProtocolErrorAndClose(t *testing.T) {
	srv := start(t, resptest.Options{})
	c := dial(t, srv, nil)
	if _, err := c.conn.Write([]byte("*1\r\n:5\r\n")); err != nil {
		t.Fatal(err)
	}
	got, err := c.reply()
	if err != nil || got != "-ERR Protocol error" {
		t.Fatalf("got %q, %v; want -ERR Protocol error", got, err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := net.DialTimeout("tcp", srv.Addr(), time.Second); err == nil {
		t.Fatal("server still accepts connections after Close")
	}
}

// BenchmarkMGET64TCP is a 64-key MGET round trip over loopback TCP to the
// test server: codec plus kernel, for comparison with BenchmarkMGET64.
func BenchmarkMGET64TCP(b *testing.B) {
	srv, err := resptest.Start(resptest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	for i := 1; i <= 128; i++ {
		srv.Set("item:"+strconv.Itoa(i), []byte(`{"id":`+strconv.Itoa(i)+`}`))
	}
	conn, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	rd := resp.NewReader(conn, resp.Limits{})
	var cmd, key []byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		cmd = resp.AppendArrayHeader(cmd[:0], 65)
		cmd = resp.AppendBulkString(cmd, "MGET")
		for k := 0; k < 64; k++ {
			key = strconv.AppendInt(append(key[:0], "item:"...), int64((i*64+k)%128+1), 10)
			cmd = resp.AppendBulk(cmd, key)
		}
		if _, err := conn.Write(cmd); err != nil {
			b.Fatal(err)
		}
		if err := rd.Skip(); err != nil {
			b.Fatal(err)
		}
	}
}
