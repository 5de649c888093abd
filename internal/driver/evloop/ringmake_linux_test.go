package evloop

import "testing"

// Rings made and closed in quick succession, as a test's Runs and the
// RingAvailable probe make them, all succeed (a ring of buffer entries in
// memory of ours failed after a few hundred, Linux 6.18: EEXIST).
func TestRingsMadeInSuccession(t *testing.T) {
	ringCheck(t)
	bufs := make([]byte, 4*1024)
	for i := range 2000 {
		r, err := newRing(64, bufs, 4)
		if err != nil {
			t.Fatalf("ring %d: %v", i, err)
		}
		r.close()
	}
}
