package resp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	wire "github.com/benchrig/benchrig/internal/resp"
	"github.com/benchrig/benchrig/internal/resp/resptest"
	"github.com/benchrig/benchrig/internal/secret"
)

// Tests against the in-repo test server (package resptest); those against a
// real redis-server are in redis_test.go.

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func startTestServer(t *testing.T, opts resptest.Options) *resptest.Server {
	t.Helper()
	srv, err := resptest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func newDriver(t *testing.T, cfg Config) *Driver {
	t.Helper()
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func open(t *testing.T, d *Driver) driver.Conn {
	t.Helper()
	c, err := d.Open(testCtx(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// do runs seqs as one pipelined Do.
func do(t *testing.T, c driver.Conn, seqs ...uint64) ([]driver.Outcome, error) {
	t.Helper()
	reqs := make([]driver.Request, len(seqs))
	for i, s := range seqs {
		reqs[i].Seq = s
	}
	out := make([]driver.Outcome, len(seqs))
	err := c.Do(testCtx(t), reqs, out)
	return out, err
}

// mustOK runs seqs and fails unless every outcome is answered: OK, or a
// Miss where a test left keys missing on purpose.
func mustOK(t *testing.T, c driver.Conn, seqs ...uint64) []driver.Outcome {
	t.Helper()
	out, err := do(t, c, seqs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if o.Class != driver.OK && o.Class != driver.Miss {
			t.Fatalf("outcome %d: %v %q", i, o.Class, o.Msg)
		}
	}
	return out
}

func TestMGETAgainstTestServer(t *testing.T) {
	srv := startTestServer(t, resptest.Options{})
	for i := 1; i <= 8; i++ {
		if i%2 == 0 {
			srv.Set("item:"+strconv.Itoa(i), []byte("v"+strconv.Itoa(i)))
		}
	}
	d := newDriver(t, Config{Addr: srv.Addr(), Batch: 4, KeySpace: 8})
	if d.MaxPipeline() != MaxPipeline || d.Name() != "resp" || len(d.Ops()) != 1 {
		t.Fatalf("driver identity: %s %v %d", d.Name(), d.Ops(), d.MaxPipeline())
	}
	c := open(t, d)
	out := mustOK(t, c, 0, 1, 2, 3) // 16 keys: 1..8 twice, half present
	for _, o := range out {
		// *4, then two "$-1" (5 bytes) and two "$2\r\nvN" (8 bytes).
		if want := int64(4 + 2*5 + 2*8); o.Bytes != want {
			t.Fatalf("Bytes = %d, want %d", o.Bytes, want)
		}
		if o.Done <= 0 {
			t.Fatal("Done not stamped")
		}
	}
	if st := d.Stats(); st.Hits != 8 || st.Nils != 8 {
		t.Fatalf("Stats hits %d nils %d, want 8 and 8", st.Hits, st.Nils)
	}
}

func TestPipelinedCustomCommandCounts(t *testing.T) {
	srv := startTestServer(t, resptest.Options{})
	d := newDriver(t, Config{Addr: srv.Addr(), Args: []string{"INCR", "counter"}})
	c := open(t, d)
	before := srv.Commands()
	const total, depth = 1000, 16
	seqs := make([]uint64, 0, depth)
	for seq := uint64(0); seq < total; seq++ {
		seqs = append(seqs, seq)
		if len(seqs) == depth || seq == total-1 {
			mustOK(t, c, seqs...)
			seqs = seqs[:0]
		}
	}
	if got := srv.Commands() - before; got != total {
		t.Fatalf("server received %d commands, want %d", got, total)
	}
}

func TestServerErrorIsAnOutcome(t *testing.T) {
	srv := startTestServer(t, resptest.Options{})
	d := newDriver(t, Config{Addr: srv.Addr(), Args: []string{"FLY", "{key}"}})
	c := open(t, d)
	out, err := do(t, c, 0, 1)
	if err != nil {
		t.Fatalf("a server error reply broke the connection: %v", err)
	}
	for _, o := range out {
		if o.Class != driver.Error || o.Msg != "ERR" {
			t.Fatalf("outcome %v %q, want error ERR", o.Class, o.Msg)
		}
	}
	if fe := d.Stats().FirstServerError; fe != "ERR unknown command 'FLY'" {
		t.Fatalf("FirstServerError = %q", fe)
	}
	// The connection is still in step.
	d2 := newDriver(t, Config{Addr: srv.Addr(), Args: []string{"PING"}})
	mustOK(t, open(t, d2), 0)
}

func TestAuthAgainstTestServer(t *testing.T) {
	srv := startTestServer(t, resptest.Options{Password: "pw-123"})
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("pw-123\n"), 0o600)
	d := newDriver(t, Config{Addr: srv.Addr(), Auth: AuthConfig{TokenFile: tokenFile}})
	mustOK(t, open(t, d), 0)

	d = newDriver(t, Config{Addr: srv.Addr(), Auth: AuthConfig{Token: secret.New("wrong-pw")}})
	_, err := d.Open(testCtx(t), 3)
	if err == nil || !strings.Contains(err.Error(), "AUTH failed: WRONGPASS invalid username-password pair") {
		t.Fatalf("wrong password: %v", err)
	}
	if strings.Contains(err.Error(), "wrong-pw") {
		t.Fatalf("error shows the token: %v", err)
	}
	var se *wire.Error
	if !errors.As(err, &se) || se.Prefix() != "WRONGPASS" {
		t.Fatalf("error is not a *resp.Error with WRONGPASS: %v", err)
	}

	d = newDriver(t, Config{Addr: srv.Addr()})
	_, err = d.Open(testCtx(t), 0)
	if err == nil || !strings.Contains(err.Error(), "NOAUTH") || !strings.Contains(err.Error(), "token_file") {
		t.Fatalf("no password: %v", err)
	}
}

func TestTLSAgainstTestServer(t *testing.T) {
	srv := startTestServer(t, resptest.Options{TLS: true})
	srv.Set("item:1", []byte("secret-ish"))
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, srv.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, Config{Addr: srv.Addr(), Command: "GET", KeySpace: 1, TLS: TLSConfig{Enabled: true, CAFile: ca}})
	mustOK(t, open(t, d), 0, 1)
	if st := d.Stats(); st.Hits != 2 {
		t.Fatalf("hits %d, want 2", st.Hits)
	}

	// Without the CA the certificate is refused at Open.
	d = newDriver(t, Config{Addr: srv.Addr(), TLS: TLSConfig{Enabled: true}})
	if _, err := d.Open(testCtx(t), 0); err == nil || !strings.Contains(err.Error(), "TLS handshake") {
		t.Fatalf("untrusted certificate: %v", err)
	}
	// Plain TCP to a TLS server fails at Open, without hanging.
	d = newDriver(t, Config{Addr: srv.Addr(), DialTimeout: 2 * time.Second})
	if _, err := d.Open(testCtx(t), 0); err == nil || !strings.Contains(err.Error(), "TLS-only") {
		t.Fatalf("plain connection to a TLS server: %v", err)
	}
}

func TestCloseMidReply(t *testing.T) {
	srv := startTestServer(t, resptest.Options{Hook: func(args [][]byte) resptest.Action {
		if string(args[0]) == "MGET" && string(args[1]) == "item:3" {
			return resptest.CloseMidReply
		}
		return resptest.Serve
	}})
	for i := 1; i <= 4; i++ {
		srv.Set("item:"+strconv.Itoa(i), []byte(strings.Repeat("x", 200)))
	}
	d := newDriver(t, Config{Addr: srv.Addr(), Batch: 2, KeySpace: 4})
	c := open(t, d)
	out, err := do(t, c, 0, 1, 0) // second request asks for item:3
	if err == nil {
		t.Fatal("Do succeeded on a connection closed mid-reply")
	}
	if out[0].Class != driver.OK {
		t.Fatalf("first outcome %v %q, want ok", out[0].Class, out[0].Msg)
	}
	for _, o := range out[1:] {
		if o.Class != driver.Error || o.Msg == "" {
			t.Fatalf("outcome after the close: %v %q", o.Class, o.Msg)
		}
	}
	if out[1].Msg != "connection closed mid-reply" && out[1].Msg != "connection reset by peer" {
		t.Fatalf("Msg = %q", out[1].Msg)
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := startTestServer(t, resptest.Options{Hook: func(args [][]byte) resptest.Action {
		if string(args[0]) == "GET" {
			select { // stall, but never past the test
			case <-release:
			case <-time.After(10 * time.Second):
			}
		}
		return resptest.Serve
	}})
	t.Cleanup(func() { close(release) })
	d := newDriver(t, Config{Addr: srv.Addr(), Command: "GET", Timeout: 100 * time.Millisecond})
	c := open(t, d)
	out, err := do(t, c, 0, 1)
	if err == nil {
		t.Fatal("Do returned no error after a timeout")
	}
	for _, o := range out {
		if o.Class != driver.Timeout || o.Msg != "timeout" {
			t.Fatalf("outcome %v %q, want timeout", o.Class, o.Msg)
		}
	}
}

func TestCloseDuringDo(t *testing.T) {
	release := make(chan struct{})
	srv := startTestServer(t, resptest.Options{Hook: func(args [][]byte) resptest.Action {
		if string(args[0]) == "GET" {
			select {
			case <-release:
			case <-time.After(10 * time.Second):
			}
		}
		return resptest.Serve
	}})
	t.Cleanup(func() { close(release) })
	d := newDriver(t, Config{Addr: srv.Addr(), Command: "GET"})
	c := open(t, d)
	time.AfterFunc(50*time.Millisecond, func() { c.Close() })
	out, err := do(t, c, 0)
	if err == nil || out[0].Class != driver.Error {
		t.Fatalf("Do after Close: %v, %v %q", err, out[0].Class, out[0].Msg)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := do(t, c, 1); err == nil {
		t.Fatal("Do on a closed connection succeeded")
	}
}

func TestNonRESPPeer(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello"))
	}))
	t.Cleanup(hs.Close)
	addr := strings.TrimPrefix(hs.URL, "http://")

	start := time.Now()
	d := newDriver(t, Config{Addr: addr, DialTimeout: 5 * time.Second})
	_, err := d.Open(testCtx(t), 0)
	if err == nil || !strings.Contains(err.Error(), "is the peer speaking HTTP?") {
		t.Fatalf("Open to an HTTP server: %v", err)
	}
	if !errors.Is(err, wire.ErrProtocol) {
		t.Fatalf("error does not wrap ErrProtocol: %v", err)
	}

	// Without the opening PING, the first Do reports it.
	d = newDriver(t, Config{Addr: addr, NoPing: true, Timeout: 5 * time.Second})
	c := open(t, d)
	out, err := do(t, c, 0)
	if err == nil || out[0].Class != driver.Error || out[0].Msg != "protocol error" {
		t.Fatalf("Do to an HTTP server: %v, %v %q", err, out[0].Class, out[0].Msg)
	}
	if !strings.Contains(err.Error(), "HTTP") {
		t.Fatalf("error does not hint at HTTP: %v", err)
	}
	if el := time.Since(start); el > 8*time.Second {
		t.Fatalf("took %v: hung until a timeout", el)
	}
}

func TestDoArgumentChecks(t *testing.T) {
	srv := startTestServer(t, resptest.Options{})
	c := open(t, newDriver(t, Config{Addr: srv.Addr()}))
	out := make([]driver.Outcome, 1)
	if err := c.Do(testCtx(t), make([]driver.Request, 2), out); err == nil {
		t.Fatal("Do with fewer outcomes than requests succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Do(ctx, make([]driver.Request, 1), out); err == nil || out[0].Msg != "canceled" {
		t.Fatalf("Do with a canceled context: %v %q", err, out[0].Msg)
	}
}

func TestDialFailure(t *testing.T) {
	srv := startTestServer(t, resptest.Options{})
	addr := srv.Addr()
	srv.Close() // nothing listens there now
	d := newDriver(t, Config{Addr: addr, DialTimeout: 2 * time.Second})
	if _, err := d.Open(testCtx(t), 5); err == nil || !strings.Contains(err.Error(), "worker 5: dial "+addr) {
		t.Fatalf("dial to a closed port: %v", err)
	}
}
