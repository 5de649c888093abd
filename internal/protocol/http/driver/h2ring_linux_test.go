//go:build linux

package http

import (
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver/evloop/ringtest"
)

// The HTTP/2 event loop's tests again with its Runs on io_uring (package
// evloop: a closed loop's Run blocking in the kernel, without busy poll):
// streams refilled one by one, the server's stream limit, the deadline's
// outstanding streams, request bodies held for the flow-control window,
// stream timeouts, h2c and TLS against Go's server,
// GOAWAY, resets and statuses, bodies, and nginx. Each must have gone on
// the ring, but a rate's Runs, which stay on epoll; a machine that refuses
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
		{"TLSGoServerH1AndH2", TestTLSGoServerH1AndH2, true},
		{"H2C", TestH2C, true},
		{"GoawayIsAReconnect", TestH2GoawayIsAReconnect, true},
		{"ResetStreamsAndStatuses", TestH2ResetStreamsAndStatuses, true},
		{"RequestsWithBodies", TestH2RequestsWithBodies, true},
		{"Nginx", TestNginxTLSAndH2, true},
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
