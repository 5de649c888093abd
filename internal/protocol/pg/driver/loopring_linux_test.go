//go:build linux

package pg

import (
	"testing"

	"github.com/benchrig/benchrig/internal/driver/evloop/ringtest"
)

// The event loop's tests again with its Runs on io_uring (package evloop:
// a closed loop's Run blocking in the kernel, without busy poll): rows
// equal to Fetch's, whole and split anywhere by a proxy, mixed reads and
// writes counted as the server counts them, server errors, timeouts,
// cancellation, backends, a huge message refused, the decoding switched
// off, and no allocation per request. Each must have gone on the ring; a
// machine that refuses io_uring skips them (ringtest.Run).
func TestLoopOnRing(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"RowsMatchFetch", TestLoopRowsMatchFetch},
		{"RowsSplitAnywhere", TestLoopRowsSplitAnywhere},
		{"MixedCounts", TestLoopMixedCounts},
		{"ServerErrorKeepsConnection", TestLoopServerErrorKeepsConnection},
		{"TimeoutReplacesConnection", TestLoopTimeoutReplacesConnection},
		{"CancelReturnsPromptly", TestLoopCancelReturnsPromptly},
		{"Backends", TestLoopBackends},
		{"RefusesHugeMessage", TestLoopRefusesHugeMessage},
		{"SkipDecode", TestSkipDecode},
		{"ZeroAllocPerRequest", TestLoopZeroAllocPerRequest},
	} {
		ringtest.Run(t, tc.name, tc.f, true)
	}
}
