//go:build linux

package http

import (
	"context"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
	"github.com/benchrig/benchrig/internal/driver/evloop/ringtest"
)

// The HTTP/2 event loop's tests again with its Runs on io_uring (package
// evloop: a closed loop's Run blocking in the kernel, without busy poll):
// streams refilled one by one, the server's stream limit, the deadline's
// outstanding streams, request bodies held for the flow-control window,
// stream timeouts, GOAWAY from Go's server, resets and statuses,
// bodies, nginx over TLS, and waits coalesced. Each must have gone on the
// ring, but a rate's Runs, which stay on epoll; a machine that refuses
// io_uring skips them (ringtest.Run).
func TestH2LoopOnRing(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(*testing.T)
		ring bool // a Run must have gone on the ring
	}{
		{"RateStaysOnEpoll", TestH2RateKeepsStreamsInFlight, false},
		{"RefillsPerStream", TestH2LoopRefillsPerStream, true},
		{"MaxConcurrentStreams", TestH2LoopMaxConcurrentStreams, true},
		{"DeadlineOutstanding", TestH2LoopDeadlineOutstanding, true},
		{"BodiesWaitForTheWindow", TestH2LoopBodiesWaitForTheWindow, true},
		{"StreamTimeout", TestH2LoopStreamTimeout, true},
		{"GoawayIsAReconnect", TestH2GoawayIsAReconnect, true},
		{"ResetStreamsAndStatuses", TestH2ResetStreamsAndStatuses, true},
		{"RequestsWithBodies", TestH2RequestsWithBodies, true},
		{"Nginx", TestNginxTLSAndH2, true},
		{"Coalesces", h2Coalesces, true},
	} {
		ringtest.Run(t, tc.name, tc.f, tc.ring)
	}
}

// On the ring, as on epoll, an HTTP/2 request over TLS allocates nothing
// once warmed up, against nginx (a process of its own: see
// TestLoopZeroAllocsOnRing).
func TestH2LoopZeroAllocsOnRing(t *testing.T) {
	cert := validCert(t, "h2ring")
	url, _ := startNginx(t, cert)
	ringtest.Run(t, "nginx", func(t *testing.T) {
		l := openH2(t, Config{URL: url, HTTP2: true, Timeout: 5 * time.Second, TLS: &TLSConfig{CACert: cert.CertFile}}, 2)
		perRequestAllocs(t, l, 8, "crypto/tls.(*Conn).readFromUntil")
	}, true)
}

// With 8 connections busy and answers a millisecond or more in coming, a
// wait on the ring waits for more of them (evloop's Poller.Coalesce), a
// hundredth of their latency at most, and every request is answered and
// counted as without it (placement.coalesce off: no wait coalesced).
func h2Coalesces(t *testing.T) {
	if !evloop.RingCoalesces() {
		t.Skip("this kernel has no IORING_FEAT_MIN_TIMEOUT (Linux 6.13): its waits are not coalesced")
	}
	srv := &h2Canned{answerAt: 1, delay: time.Millisecond}
	// no request timeout and no deadline: the waits have no time limit but
	// the coalescing's own
	l := openH2(t, Config{URL: srv.start(t)}, 8)
	for _, on := range []bool{true, false} {
		defer driver.SetCoalesce(on)()
		driver.TakeCoalesced()
		w := newTally(2000)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := l.Run(ctx, 4, 0, w)
		cancel()
		if err != nil || w.ok != 2000 || w.failed != 0 || w.badSent != 0 {
			t.Fatalf("coalesce %v: %d ok, %d failed (%v), %d badly timed: %v; want 2000 ok", on, w.ok, w.failed, w.msgs, w.badSent, err)
		}
		got := driver.TakeCoalesced()
		switch {
		case !on && got != 0:
			t.Errorf("coalesce off: waits coalesced up to %v, want none", got)
		case on && (got < 10*time.Microsecond || got > evloop.CoalesceMax):
			t.Errorf("coalesce on, answers ≥ 1ms late: waits coalesced up to %v, want 10µs–%v (1 %% of the latency)", got, evloop.CoalesceMax)
		}
	}
}
