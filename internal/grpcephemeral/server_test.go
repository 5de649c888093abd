package grpcephemeral

import (
	"context"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestMethods calls every method over h2c and over TLS and holds the
// server's counts to the calls made.
func TestMethods(t *testing.T) {
	for _, tls := range []bool{false, true} {
		t.Run(map[bool]string{false: "h2c", true: "tls"}[tls], func(t *testing.T) {
			t.Parallel()
			s := StartT(t, Options{TLS: tls})
			if host, _, _ := net.SplitHostPort(s.Addr()); host != "127.0.0.1" {
				t.Fatalf("Addr() = %q, want 127.0.0.1:PORT", s.Addr())
			}
			if (s.CACertPEM() != nil) != tls {
				t.Fatalf("CACertPEM() with TLS %v: %d bytes", tls, len(s.CACertPEM()))
			}
			testMethods(t, s, dial(t, s))
		})
	}
}

func testMethods(t *testing.T, s *Server, conn *grpc.ClientConn) {
	ctx := testCtx(t)
	wantCode := func(what string, err error, code codes.Code, msg string) {
		t.Helper()
		st, _ := status.FromError(err)
		if st.Code() != code || (msg != "" && st.Message() != msg) {
			t.Errorf("%s: %v, want %v %q", what, err, code, msg)
		}
	}

	msg, id, err := invoke(ctx, t, conn, "SayHello", map[string]any{"name": "ada", "id": int64(7)})
	if err != nil || msg != "hello ada" || id != 7 {
		t.Errorf("SayHello: %q %d %v, want \"hello ada\" 7", msg, id, err)
	}

	_, _, err = invoke(ctx, t, conn, "Fail", map[string]any{"code": int32(14), "message": "try later"})
	wantCode("Fail 14", err, codes.Unavailable, "try later")
	_, _, err = invoke(ctx, t, conn, "Fail", map[string]any{"code": int32(99)})
	wantCode("Fail 99", err, codes.InvalidArgument, "code 99 out of range")
	if msg, _, err := invoke(ctx, t, conn, "Fail", map[string]any{"code": int32(0)}); err != nil || msg != "ok" {
		t.Errorf("Fail 0: %q %v, want \"ok\"", msg, err)
	}

	dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, _, err = invoke(dctx, t, conn, "Sleep", map[string]any{"ms": int64(2000)})
	cancel()
	wantCode("Sleep 2000 ms, deadline 100 ms", err, codes.DeadlineExceeded, "")
	if msg, id, err := invoke(ctx, t, conn, "Sleep", map[string]any{"ms": int64(1)}); err != nil || msg != "slept 1 ms" || id != 1 {
		t.Errorf("Sleep 1 ms: %q %d %v", msg, id, err)
	}
	_, _, err = invoke(ctx, t, conn, "Sleep", map[string]any{"ms": int64(60001)})
	wantCode("Sleep 60001 ms", err, codes.InvalidArgument, "")

	_, _, err = invoke(ctx, t, conn, "Missing", map[string]any{"name": "x"})
	wantCode("Missing", err, codes.Unimplemented, "")

	cs := stream(ctx, t, conn, "Lots")
	if err := cs.SendMsg(request(t, "Lots", map[string]any{"count": int32(5), "name": "bo"})); err != nil {
		t.Fatal(err)
	}
	cs.CloseSend()
	msgs, ids, err := recvAll(t, cs)
	if want := []string{"hello bo 0", "hello bo 1", "hello bo 2", "hello bo 3", "hello bo 4"}; err != nil || !slices.Equal(msgs, want) || !slices.Equal(ids, []int64{0, 1, 2, 3, 4}) {
		t.Errorf("Lots 5: %q %v %v, want %q ids 0…4", msgs, ids, err, want)
	}
	cs = stream(ctx, t, conn, "Lots")
	cs.SendMsg(request(t, "Lots", map[string]any{"count": int32(-1)}))
	cs.CloseSend()
	_, _, err = recvAll(t, cs)
	wantCode("Lots -1", err, codes.InvalidArgument, "")

	cs = stream(ctx, t, conn, "Collect")
	for i := range 3 {
		if err := cs.SendMsg(request(t, "Collect", map[string]any{"name": "c", "id": int64(i)})); err != nil {
			t.Fatal(err)
		}
	}
	cs.CloseSend()
	msgs, ids, err = recvAll(t, cs)
	if err != nil || !slices.Equal(msgs, []string{"collected 3"}) || !slices.Equal(ids, []int64{3}) {
		t.Errorf("Collect of 3: %q %v %v, want \"collected 3\" id 3", msgs, ids, err)
	}

	cs = stream(ctx, t, conn, "Chat")
	for i, name := range []string{"x", "y", "z"} {
		if err := cs.SendMsg(request(t, "Chat", map[string]any{"name": name, "id": int64(10 + i)})); err != nil {
			t.Fatal(err)
		}
		rep := reply(t)
		if err := cs.RecvMsg(rep); err != nil {
			t.Fatalf("Chat %d: %v", i, err)
		}
		if m, id := text(rep); m != "hello "+name || id != int64(10+i) {
			t.Errorf("Chat %d: %q %d, want %q %d", i, m, id, "hello "+name, 10+i)
		}
	}
	cs.CloseSend()
	if msgs, _, err := recvAll(t, cs); err != nil || len(msgs) != 0 {
		t.Errorf("Chat after CloseSend: %q %v, want the end", msgs, err)
	}

	// Missing is answered by grpc-go, not counted; Lots -1 was received.
	waitCounts(t, s, map[string]int64{"SayHello": 1, "Fail": 3, "Sleep": 3, "Lots": 2, "Collect": 1, "Chat": 1},
		1+3+3+2+3+3)
}

// TestSleepEndsWithItsCall: a Sleep whose client gave up ends at once on
// the server (so Close needs no hard stop), and Close is idempotent.
func TestSleepEndsWithItsCall(t *testing.T) {
	s := StartT(t, Options{})
	conn := dial(t, s)
	ctx, cancel := context.WithCancel(testCtx(t))
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	_, _, err := invoke(ctx, t, conn, "Sleep", map[string]any{"ms": int64(60000)})
	if status.Code(err) != codes.Canceled {
		t.Fatalf("canceled Sleep: %v, want Canceled", err)
	}
	waitCounts(t, s, map[string]int64{"Sleep": 1}, 1)
	t0 := time.Now()
	s.Close()
	if took := time.Since(t0); took >= closeGrace {
		t.Errorf("Close took %v: the Sleep handler outlived its call", took)
	}
	s.Close()
}

// TestMaxConcurrentStreams: with one stream per connection, a second call
// waits for the first.
func TestMaxConcurrentStreams(t *testing.T) {
	s := StartT(t, Options{MaxConcurrentStreams: 1})
	conn := dial(t, s)
	ctx := testCtx(t)
	if _, _, err := invoke(ctx, t, conn, "SayHello", nil); err != nil { // the settings are known
		t.Fatal(err)
	}
	sleepCtx, stopSleep := context.WithCancel(ctx)
	defer stopSleep()
	req, rep := request(t, "Sleep", map[string]any{"ms": int64(60000)}), reply(t)
	go conn.Invoke(sleepCtx, path("Sleep"), req, rep)
	waitCounts(t, s, map[string]int64{"SayHello": 1, "Sleep": 1}, 2)
	dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, _, err := invoke(dctx, t, conn, "SayHello", nil); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("SayHello beside a running Sleep with 1 stream allowed: %v, want DeadlineExceeded", err)
	}
	stopSleep()
	if _, _, err := invoke(ctx, t, conn, "SayHello", nil); err != nil {
		t.Fatalf("SayHello once the Sleep ended: %v", err)
	}
}

func TestProtoFiles(t *testing.T) {
	dir := t.TempDir()
	p, err := WriteProto(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != Proto() || !strings.Contains(Proto(), "service Greeter") {
		t.Fatalf("WriteProto: %v; content differs from Proto(): %v", err, string(b) != Proto())
	}
	if _, err := StartT(t, Options{}).CACertFile(dir); err == nil {
		t.Error("CACertFile without TLS: no error")
	}
	s := StartT(t, Options{TLS: true})
	ca, err := s.CACertFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ca); string(b) != string(s.CACertPEM()) || !strings.HasPrefix(string(b), "-----BEGIN CERTIFICATE-----") {
		t.Fatalf("ca.pem: %q", b)
	}
}

func TestStartBusyAddr(t *testing.T) {
	s := StartT(t, Options{})
	_, err := Start(Options{Addr: s.Addr()})
	if err == nil || !strings.Contains(err.Error(), s.Addr()) {
		t.Fatalf("Start on a busy address: %v", err)
	}
}
