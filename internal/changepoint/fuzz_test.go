package changepoint

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
)

// fuzzSeries reads a series of at most 512 points from data: when the
// first byte is even, each 8 bytes are a float64's bits (NaN, ±Inf,
// extremes and subnormals included); when odd, each byte is a value
// from 0 to 255 (levels, steps and ties).
func fuzzSeries(data []byte) []float64 {
	if len(data) == 0 {
		return nil
	}
	mode, data := data[0], data[1:]
	var xs []float64
	if mode%2 == 0 {
		for ; len(data) >= 8 && len(xs) < 512; data = data[8:] {
			xs = append(xs, math.Float64frombits(binary.LittleEndian.Uint64(data)))
		}
		return xs
	}
	for _, b := range data[:min(len(data), 512)] {
		xs = append(xs, float64(b))
	}
	return xs
}

func FuzzDetect(f *testing.F) {
	step := []byte{1}
	for i := range 40 {
		step = append(step, byte(100+i%3+30*(i/25)))
	}
	f.Add(step, uint8(0), uint8(0), uint64(1))
	f.Add([]byte{1, 5, 5, 5, 5, 5, 5, 9, 9, 9, 9, 9, 9}, uint8(2), uint8(19), uint64(2))
	f.Add(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64([]byte{0}, math.Float64bits(math.MaxFloat64)), math.Float64bits(-math.MaxFloat64)), uint8(2), uint8(5), uint64(3))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f}, uint8(3), uint8(1), uint64(4)) // NaN
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, data []byte, minSize, perms uint8, seed uint64) {
		xs := fuzzSeries(data)
		o := Options{MinSize: int(minSize % 8), Permutations: int(perms % 64), Seed: seed}
		var cps []Point
		var err error
		fuzzcheck.Bound(t, len(data), func() { cps, err = Detect(xs, o) })
		if err != nil {
			finite := true
			for _, x := range xs {
				finite = finite && !math.IsNaN(x) && !math.IsInf(x, 0)
			}
			if !errors.Is(err, ErrInput) || (finite && o.MinSize != 1) {
				t.Fatalf("Detect(%v, %+v): unexpected error %v", xs, o, err)
			}
			return
		}
		ms := o.MinSize
		if ms == 0 {
			ms = DefaultMinSize
		}
		last := 0
		for _, p := range cps {
			if p.Index < last+ms || p.Index > len(xs)-ms {
				t.Fatalf("Detect(%v, %+v) = %+v: change point at %d out of range or order (min size %d)", xs, o, cps, p.Index, ms)
			}
			last = p.Index
			if !(p.P > 0 && p.P <= DefaultAlpha) || math.IsNaN(p.ChangePct) || math.IsInf(p.ChangePct, 0) || !(p.Low <= p.High) {
				t.Fatalf("Detect(%v, %+v): point %+v: want 0 < P ≤ α, a finite change and Low ≤ High", xs, o, p)
			}
		}
	})
}
