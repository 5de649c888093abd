//go:build linux

package pg

import (
	"testing"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// The event loop's tests again with its Runs on io_uring (package evloop:
// a closed loop's Run blocking in the kernel, without busy poll): rows
// equal to Fetch's, whole and split anywhere by a proxy, mixed reads and
// writes counted as the server counts them, server errors, timeouts,
// cancellation, backends, a huge message refused, the decoding switched
// off, and no allocation per request. Each must have gone on the ring; a
// machine that refuses io_uring skips them (evloop.RingCheck).
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
		t.Run(tc.name, func(t *testing.T) {
			if why, err := evloop.RingCheck(); err != nil {
				t.Fatal(err)
			} else if why != "" {
				t.Skip(why)
			}
			t.Cleanup(driver.SetBlockInKernel(true))
			t.Cleanup(driver.SetIOUring(true))
			t.Cleanup(driver.SetBusyPoll(0))
			before := driver.RingRuns()
			tc.f(t)
			if err := evloop.RingRefused(); err != nil {
				t.Fatalf("io_uring refused during the test: %v", err)
			}
			if driver.RingRuns() == before {
				t.Fatal("no Run went on io_uring")
			}
		})
	}
}
