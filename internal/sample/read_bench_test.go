//go:build linux

package sample

import (
	"os"
	"testing"
	"time"
)

// BenchmarkRead measures one reading of a one-process tree (this test) on
// the real /proc: walking the children files (held open), and the scan of
// every process on the machine, with and without the PSS reading.
func BenchmarkRead(b *testing.B) {
	for _, bc := range []struct {
		name      string
		full, pss bool
	}{
		{"full scan, PSS", true, true},
		{"full scan", true, false},
		{"walk", false, false},
		{"walk, PSS", false, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r, err := newReader(DefaultRoot)
			if err != nil {
				b.Fatal(err)
			}
			start, err := r.rootStart(os.Getpid())
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			if bc.full {
				r.mode = modeScan
			}
			for b.Loop() {
				if bc.full {
					r.lastFull = time.Time{}
				}
				if _, err := r.read(os.Getpid(), start, nil, bc.pss, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
