package capacity

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
)

// FuzzSearch runs searches over fuzzed settings against a knee at a
// fuzzed capacity, with fuzzed noise: a search never panics, never takes
// more steps than WorstCase and never reports a capacity at or above
// the first UNHEALTHY rate it saw; without noise it finds the knee.
func FuzzSearch(f *testing.F) {
	f.Add(100.0, 100000.0, 0.05, 2.0, uint8(3), uint8(1), 1234.0, uint8(0), uint64(1))
	f.Add(1.0, 1e7, 0.001, 1.1, uint8(100), uint8(3), 5e6, uint8(40), uint64(2))
	f.Add(0.001, 0.001, 0.5, 10.0, uint8(0), uint8(2), 0.0, uint8(255), uint64(3))
	f.Add(100.0, 200.0, 0.0, 0.0, uint8(2), uint8(0), math.NaN(), uint8(9), uint64(4))
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, from, max, res, factor float64, confirm, searches uint8, C float64, noise uint8, seed uint64) {
		cfg := Config{From: from, Max: max, Resolution: res, Factor: factor, Confirm: int(confirm % 8), Searches: int(searches % 4)}
		var p Prober = &knee{C: C}
		if noise > 0 {
			p = &noisy{C: C, Near: 0.5, P: float64(noise) / 512, Up: float64(noise%16) / 32, rng: rand.New(rand.NewPCG(seed, seed>>7))}
		}
		var r Result
		var err error
		fuzzcheck.Bound(t, 64, func() { r, err = Search(context.Background(), cfg, p, nil) })
		if err != nil {
			if cfg.Validate() == nil {
				t.Fatalf("%+v: valid config, error %v", cfg, err)
			}
			return
		}
		checkInvariants(t, cfg, r)
		if noise == 0 && !math.IsNaN(C) {
			checkKnee(t, cfg, C, r)
		}
	})
}
