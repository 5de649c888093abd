package grpcephemeral

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
)

// greeterTranscript calls every method of the Greeter service the same
// way and writes down each answer, one line per answer: what the Go and
// the Node servers must say alike. A status is its code and message, but
// for the statuses a server library words itself (a passed deadline, an
// unimplemented method), which are their code alone.
func greeterTranscript(t *testing.T, conn *grpc.ClientConn) []string {
	ctx := testCtx(t)
	var lines []string
	answer := func(what string, msgs []string, ids []int64, err error, ownWords bool) {
		t.Helper()
		if err != nil {
			st, _ := status.FromError(err)
			if ownWords {
				lines = append(lines, fmt.Sprintf("%s: %s", what, st.Code()))
			} else {
				lines = append(lines, fmt.Sprintf("%s: %s %q", what, st.Code(), st.Message()))
			}
		}
		for i := range msgs {
			lines = append(lines, fmt.Sprintf("%s: %q %d", what, msgs[i], ids[i]))
		}
	}
	unary := func(what, name string, fields map[string]any, ownWords bool) {
		t.Helper()
		msg, id, err := invoke(ctx, t, conn, name, fields)
		if err != nil {
			answer(what, nil, nil, err, ownWords)
			return
		}
		answer(what, []string{msg}, []int64{id}, nil, false)
	}

	unary("SayHello", "SayHello", map[string]any{"name": "ada", "id": int64(7)}, false)
	unary("SayHello big id", "SayHello", map[string]any{"name": "long", "id": int64(1) << 60}, false)
	unary("Fail 14", "Fail", map[string]any{"code": int32(14), "message": "try later"}, false)
	unary("Fail 99", "Fail", map[string]any{"code": int32(99)}, false)
	unary("Fail 0", "Fail", map[string]any{"code": int32(0)}, false)
	unary("Sleep 1", "Sleep", map[string]any{"ms": int64(1)}, false)
	unary("Sleep 60001", "Sleep", map[string]any{"ms": int64(60001)}, false)
	dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, _, err := invoke(dctx, t, conn, "Sleep", map[string]any{"ms": int64(2000)})
	cancel()
	answer("Sleep 2000, deadline 100 ms", nil, nil, err, true)
	unary("Missing", "Missing", map[string]any{"name": "x"}, true)

	for _, count := range []int32{5, -1} {
		cs := stream(ctx, t, conn, "Lots")
		if err := cs.SendMsg(request(t, "Lots", map[string]any{"count": count, "name": "bo"})); err != nil {
			t.Fatal(err)
		}
		cs.CloseSend()
		msgs, ids, err := recvAll(t, cs)
		answer(fmt.Sprintf("Lots %d", count), msgs, ids, err, false)
	}

	cs := stream(ctx, t, conn, "Collect")
	for i := range 3 {
		if err := cs.SendMsg(request(t, "Collect", map[string]any{"name": "c", "id": int64(i)})); err != nil {
			t.Fatal(err)
		}
	}
	cs.CloseSend()
	msgs, ids, err := recvAll(t, cs)
	answer("Collect 3", msgs, ids, err, false)

	cs = stream(ctx, t, conn, "Chat")
	for i, name := range []string{"x", "y", "z"} {
		if err := cs.SendMsg(request(t, "Chat", map[string]any{"name": name, "id": int64(10 + i)})); err != nil {
			t.Fatal(err)
		}
		rep := reply(t)
		err := cs.RecvMsg(rep)
		m, id := text(rep)
		answer("Chat "+name, []string{m}, []int64{id}, err, false)
	}
	cs.CloseSend()
	msgs, ids, err = recvAll(t, cs)
	answer("Chat end", msgs, ids, err, false)
	return lines
}

// wantTranscript is what greeter.go answers (TestMethods holds the Go
// server to the same answers).
var wantTranscript = []string{
	`SayHello: "hello ada" 7`,
	`SayHello big id: "hello long" 1152921504606846976`,
	`Fail 14: Unavailable "try later"`,
	`Fail 99: InvalidArgument "code 99 out of range"`,
	`Fail 0: "ok" 0`,
	`Sleep 1: "slept 1 ms" 1`,
	`Sleep 60001: InvalidArgument "ms 60001 out of range 0–60000"`,
	`Sleep 2000, deadline 100 ms: DeadlineExceeded`,
	`Missing: Unimplemented`,
	`Lots 5: "hello bo 0" 0`, `Lots 5: "hello bo 1" 1`, `Lots 5: "hello bo 2" 2`, `Lots 5: "hello bo 3" 3`, `Lots 5: "hello bo 4" 4`,
	`Lots -1: InvalidArgument "count -1 out of range 0–1000000"`,
	`Collect 3: "collected 3" 3`,
	`Chat x: "hello x" 10`, `Chat y: "hello y" 11`, `Chat z: "hello z" 12`,
}

// TestNodeServerAnswersAsGoServer calls every method of the Go server and
// of examples/grpc/server.js (@grpc/grpc-js on Node 24) with grpc-go's
// client: their answers are the same, line for line, and so are the calls
// and request messages each counts.
func TestNodeServerAnswersAsGoServer(t *testing.T) {
	node := StartNode(t, NodeOptions{})
	goSrv := StartT(t, Options{})
	creds := grpc.WithTransportCredentials(insecure.NewCredentials())

	goLines := greeterTranscript(t, dialAddr(t, goSrv.Addr(), creds))
	if !slices.Equal(goLines, wantTranscript) {
		t.Fatalf("the Go server answered:\n%s\nwant:\n%s", strings.Join(goLines, "\n"), strings.Join(wantTranscript, "\n"))
	}
	nodeLines := greeterTranscript(t, dialAddr(t, node.Addr(), creds))
	if !slices.Equal(nodeLines, goLines) {
		t.Errorf("the Node server answered:\n%s\nthe Go server:\n%s", strings.Join(nodeLines, "\n"), strings.Join(goLines, "\n"))
	}

	// The Go server's counts, once its handlers are done (the Sleep past
	// its deadline ends a moment after its client gave up).
	calls := map[string]int64{"SayHello": 2, "Fail": 3, "Sleep": 3, "Lots": 2, "Collect": 1, "Chat": 1}
	var n int64
	for _, c := range calls {
		n += c
	}
	waitCounts(t, goSrv, calls, 2+3+3+2+3+3)
	want := fmt.Sprintf("served %d calls, %d request messages", n, goSrv.Messages())

	pid := node.PID()
	if err := node.Stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(node.Stderr(), want) {
		t.Errorf("the Node server's stderr %q lacks %q (the Go server's counts)", node.Stderr(), want)
	}
	// Nothing of its process group is left.
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d after Stop: kill 0 gave %v, want ESRCH", pid, err)
	}
}

// TestNodeServerTLSAndReflection: with NodeOptions.TLS the Node server
// serves the certificate it was given (ALPN h2), and @grpc/reflection
// lists the Greeter service.
func TestNodeServerTLSAndReflection(t *testing.T) {
	node := StartNode(t, NodeOptions{TLS: true})
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(node.CACertPEM()) {
		t.Fatal("CACertPEM: no certificate")
	}
	conn := dialAddr(t, node.Addr(), grpc.WithTransportCredentials(credentials.NewClientTLSFromCert(pool, "")))
	ctx := testCtx(t)
	if msg, id, err := invoke(ctx, t, conn, "SayHello", map[string]any{"name": "tls", "id": int64(3)}); err != nil || msg != "hello tls" || id != 3 {
		t.Fatalf("SayHello over TLS: %q %d %v", msg, id, err)
	}
	resp, err := reflect(ctx, t, conn, &grpc_reflection_v1.ServerReflectionRequest{
		MessageRequest: &grpc_reflection_v1.ServerReflectionRequest_ListServices{ListServices: "*"},
	})
	if err != nil {
		t.Fatalf("reflection: %v", err)
	}
	var names []string
	for _, svc := range resp.GetListServicesResponse().GetService() {
		names = append(names, svc.GetName())
	}
	if !slices.Contains(names, ServiceName) {
		t.Errorf("reflection lists %q, want %s among them", names, ServiceName)
	}
}
