//go:build linux

package resp

import (
	"testing"

	"github.com/benchrig/benchrig/internal/driver/evloop/ringtest"
)

// The event loop's tests again with its Runs on io_uring (package evloop:
// a closed loop's Run blocking in the kernel, without busy poll): the
// counts redis keeps, validation, AUTH, server errors, the window's end,
// replies split a byte at a time, a server closing, oversized replies,
// timeouts, unsolicited bytes, and no allocation per request. Each must
// have gone on the ring; a machine that refuses io_uring skips them
// (ringtest.Run).
func TestLoopOnRing(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"CountsMatchRedis", TestLoopCountsMatchRedis},
		{"Validation", TestLoopValidation},
		{"Auth", TestLoopAuth},
		{"ServerErrors", TestLoopServerErrors},
		{"DrainsAtDeadline", TestLoopDrainsAtDeadline},
		{"SplitReplies", TestLoopSplitReplies},
		{"ServerClosesReconnects", TestLoopServerClosesReconnects},
		{"RefusesOversizedReplies", TestLoopRefusesOversizedReplies},
		{"Timeout", TestLoopTimeout},
		{"UnsolicitedBytes", TestLoopUnsolicitedBytes},
		{"ZeroAllocPerRequest", TestLoopZeroAllocPerRequest},
	} {
		ringtest.Run(t, tc.name, tc.f, true)
	}
}
