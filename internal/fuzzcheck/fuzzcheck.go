// Package fuzzcheck holds the memory bound every fuzz target of benchrig
// applies to each input. It is used by tests only.
//
// The bound is on the bytes an input makes the code allocate, read from
// runtime/metrics (/gc/heap/allocs:bytes) before and after the call: the
// cumulative allocation of a call is an upper bound of the heap it can have
// held, and unlike a heap-in-use reading it does not depend on when the
// collector last ran. A parser whose memory follows a length it read from
// the input (a 2 GiB message header, a 100k-deep nesting) fails the bound on
// the first such input; one whose memory follows the input's own size
// passes. The process also runs under a soft memory limit so a runaway input
// is collected hard before the check reports it.
package fuzzcheck

import (
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

const (
	// MemoryLimit is the soft limit (as GOMEMLIMIT) set for a fuzz process.
	MemoryLimit = 512 << 20
	// PerByte is how many bytes an input may cause per byte of input.
	PerByte = 256
	// Base is the allocation allowed to any input, whatever its size.
	Base = 64 << 20
)

var sample = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}

// allocated is the cumulative heap allocation of the process.
func allocated() uint64 {
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// Limit sets the process's soft memory limit to MemoryLimit unless
// GOMEMLIMIT already set a smaller one. Call it once at the start of a fuzz
// target.
func Limit() {
	if cur := debug.SetMemoryLimit(-1); cur > MemoryLimit {
		debug.SetMemoryLimit(MemoryLimit)
	}
}

// Bound runs fn for an input of n bytes and fails t when fn allocated more
// than Base + PerByte*n bytes, naming both figures.
func Bound(t testing.TB, n int, fn func()) {
	t.Helper()
	before := allocated()
	fn()
	got := allocated() - before
	if max := uint64(Base) + uint64(PerByte)*uint64(n); got > max {
		t.Fatalf("an input of %d bytes allocated %d bytes, over the bound %d (%d + %d per input byte)", n, got, max, Base, PerByte)
	}
}
