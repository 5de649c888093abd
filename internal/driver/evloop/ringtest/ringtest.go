//go:build linux

// Package ringtest runs a driver's event-loop tests again with their Runs
// on io_uring (package evloop): the process's closed loops blocking in the
// kernel, without busy poll, io_uring allowed.
package ringtest

import (
	"testing"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// Run runs f as the subtest name on io_uring. A machine that refuses
// io_uring skips it (evloop.RingCheck); any other error making a ring
// fails it. After f, its parallel subtests included, io_uring must not
// have been refused, and a Run must have gone on the ring when want says
// so, none when it does not.
func Run(t *testing.T, name string, f func(*testing.T), want bool) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		if why, err := evloop.RingCheck(); err != nil {
			t.Fatal(err)
		} else if why != "" {
			t.Skip(why)
		}
		t.Cleanup(driver.SetBlockInKernel(true))
		t.Cleanup(driver.SetIOUring(true))
		t.Cleanup(driver.SetBusyPoll(0))
		before := driver.RingRuns()
		t.Cleanup(func() {
			if err := evloop.RingRefused(); err != nil {
				t.Errorf("io_uring refused during the test: %v", err)
				return
			}
			if ran := driver.RingRuns() > before; ran != want {
				t.Errorf("a Run went on io_uring: %v, want %v", ran, want)
			}
		})
		f(t)
	})
}
