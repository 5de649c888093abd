package usl

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
)

// FuzzFit fits up to 64 points read from data (each 4 bytes: N from 1
// to 65536 by a uint16, X from a uint16 scaled by 2^exp): Fit never
// panics, refuses only with its errors, and an accepted model is finite,
// within its bounds and has R² ≥ MinR2.
func FuzzFit(f *testing.F) {
	f.Add([]byte{1, 0, 100, 0, 2, 0, 190, 0, 4, 0, 90, 1, 8, 0, 200, 1}, uint8(0))
	f.Add([]byte{1, 0, 1, 0, 2, 0, 2, 0, 3, 0, 3, 0, 4, 0, 4, 0}, uint8(40))
	f.Add([]byte{255, 255, 255, 255, 1, 0, 1, 0, 2, 0, 0, 0, 9, 0, 9, 0}, uint8(200))
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, data []byte, exp uint8) {
		var ps []Point
		for ; len(data) >= 4 && len(ps) < 64; data = data[4:] {
			n := float64(binary.LittleEndian.Uint16(data)) + 1
			xv := math.Ldexp(float64(binary.LittleEndian.Uint16(data[2:])), int(exp%64)-32)
			ps = append(ps, Point{N: n, X: xv, R: 0.001})
		}
		var m Model
		var err error
		fuzzcheck.Bound(t, 4*len(ps), func() { m, err = Fit(ps); LittleCheck(ps) })
		if err != nil {
			if !errors.Is(err, ErrInput) && !errors.Is(err, ErrTooFewLevels) && !errors.Is(err, ErrPoorFit) {
				t.Fatalf("%v: unexpected error %v", ps, err)
			}
			return
		}
		for _, v := range []float64{m.Lambda, m.Sigma, m.Kappa, m.R2} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%v: non-finite model %s", ps, m)
			}
		}
		if !(m.Lambda > 0) || m.Sigma < 0 || m.Kappa < 0 || m.R2 < MinR2 || len(m.Predicted) != len(ps) {
			t.Fatalf("%v: model %s", ps, m)
		}
	})
}
