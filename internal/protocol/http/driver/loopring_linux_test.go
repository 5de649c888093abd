//go:build linux

package http

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/driver/evloop/ringtest"
)

// The HTTP/1.1 event loop's tests again with its Runs on io_uring (package
// evloop: a closed loop's Run blocking in the kernel, without busy poll):
// TLS, exact counts over pipelines, a server closing after each response or
// abruptly, timeouts, chunked bodies checked, malformed responses and
// refused connects, cancellation, a re-sent request timing out, fixed
// responses compared, and a server closing idle connections between
// windows. Each must have gone on the ring; a machine that refuses
// io_uring skips them (ringtest.Run). (The allocation tests' server
// runs in the test's process, which a Run blocking in the kernel starves
// under AllocsPerRun's one P: TestLoopZeroAllocsOnRing uses bin/hello.)
func TestLoopOnRing(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(*testing.T)
		ring bool // a Run must have gone on the ring
	}{
		{"TLS", func(t *testing.T) { tlsLoopRuns(t) }, true},
		{"ExactCountWithPipelining", TestLoopExactCountWithPipelining, true},
		{"CloseAfterEachResponse", TestLoopCloseAfterEachResponse, true},
		{"AbruptCloseCounted", TestLoopAbruptCloseCounted, true},
		{"TimeoutCounted", TestLoopTimeoutCounted, true},
		{"ChunkedWithBodyCheck", TestLoopChunkedWithBodyCheck, true},
		{"MalformedAndRefused", TestLoopMalformedAndRefused, true},
		{"CancelAndClose", TestLoopCancelAndClose, true},
		{"ResentRequestTimesOut", TestLoopResentRequestTimesOut, true},
		{"FixedResponses", TestLoopFixedResponses, true},
		{"IdleGoServerClosesKeepAlive", TestIdleGoServerClosesKeepAlive, true},
	} {
		ringtest.Run(t, tc.name, tc.f, tc.ring)
	}
}

// tlsLoopRuns runs a closed loop over TLS, through a TLS front to a canned
// server.
func tlsLoopRuns(t *testing.T) {
	cert := validCert(t, "ring")
	addr := strings.TrimSuffix(strings.TrimPrefix(cannedServer(t), "http://"), "/")
	d, err := New(Config{URL: "https://" + tlsFront(t, cert, ProtoHTTP1, addr) + "/", TLS: &TLSConfig{CACert: cert.CertFile}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.OpenLoop(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	w := newTally(50)
	if err := l.Run(context.Background(), 1, 0, w); err != nil || w.ok != 50 {
		t.Fatalf("%d OK of 50: %v %v", w.ok, err, w.msgs)
	}
}

// On the ring, as on epoll, a request allocates nothing once warmed up
// (perRequestAllocs), against bin/hello in a process of its own.
func TestLoopZeroAllocsOnRing(t *testing.T) {
	url := startServer(t, nil, helloServer(t), "-addr", "127.0.0.1:0")
	for _, p := range []int{1, 8} {
		ringtest.Run(t, fmt.Sprintf("pipeline=%d", p), func(t *testing.T) {
			perRequestAllocs(t, openLoop(t, Config{URL: url}, 3), p, "")
		}, true)
	}
}

// Over TLS too, against nginx (crypto/tls's record reader left out, as on
// epoll: TestLoopTLSZeroAllocsPerRequest).
func TestLoopTLSZeroAllocsOnRing(t *testing.T) {
	cert := validCert(t, "ring-tls")
	url, _ := startNginx(t, cert)
	ringtest.Run(t, "nginx", func(t *testing.T) {
		l := openLoop(t, Config{URL: url, TLS: &TLSConfig{CACert: cert.CertFile}}, 3)
		perRequestAllocs(t, l, 1, "crypto/tls.(*Conn).readFromUntil")
	}, true)
}
