package load

import (
	"math"
	"testing"
)

func TestConstantPacerDue(t *testing.T) {
	cases := []struct {
		rate float64
		i    uint64
		want int64
	}{
		{1000, 0, 0},
		{1000, 1, 1_000_000},
		{1000, 999, 999_000_000},
		{1000, 1_000_000, 1_000_000_000_000},
		{100, 7, 70_000_000},
		{3, 1, 333_333_333},
		{3, 2, 666_666_666},
		{3, 3, 1_000_000_000},
		{2.5, 1, 400_000_000},
		{2.5, 5, 2_000_000_000},
		{1e7, 1, 100},
		{1e7, 10_000_000, 1_000_000_000},
		{0.001, 1, 1000 * 1_000_000_000},
	}
	for _, c := range cases {
		p, err := NewConstantPacer(c.rate)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Due(c.i); got != c.want {
			t.Errorf("rate %v: Due(%d) = %d, want %d", c.rate, c.i, got, c.want)
		}
	}
}

// TestConstantPacerNoDrift walks 10⁶ intervals through Next and checks every
// due time against the closed form: nothing accumulates.
func TestConstantPacerNoDrift(t *testing.T) {
	for _, rate := range []float64{1000, 3, 7919, 123456.789} {
		p, _ := NewConstantPacer(rate)
		pk := int64(math.Round(rate * 1000))
		var prev int64 = -1
		for i := int64(0); i < 1_000_000; i++ {
			d := p.Next()
			// closed form with big enough integers: i*1e12/pk
			hi := i / pk * 1_000_000_000_000
			lo := (i % pk) * 1_000_000_000_000 / pk
			if want := hi + lo; d != want {
				t.Fatalf("rate %v: request %d due %d, want %d", rate, i, d, want)
			}
			if d < prev {
				t.Fatalf("rate %v: due times went backwards at %d", rate, i)
			}
			prev = d
		}
		// after 10⁶ requests the schedule is exactly 10⁶/rate seconds in.
		if got, want := float64(p.Due(1_000_000))/1e9, 1e6/(float64(pk)/1000); math.Abs(got-want) > 1e-9 {
			t.Errorf("rate %v: 10⁶th due at %.12f s, want %.12f s", rate, got, want)
		}
	}
}

func TestPacerBadRate(t *testing.T) {
	for _, r := range []float64{0, -1, math.NaN(), math.Inf(1), 1e-4} {
		if _, err := NewConstantPacer(r); err == nil {
			t.Errorf("NewConstantPacer(%v): want error", r)
		}
	}
	if _, err := NewPoissonPacer(0, 1); err == nil {
		t.Error("NewPoissonPacer(0): want error")
	}
}

func TestPoissonPacerReproducibleAndMean(t *testing.T) {
	a, _ := NewPoissonPacer(1000, 42)
	b, _ := NewPoissonPacer(1000, 42)
	c, _ := NewPoissonPacer(1000, 43)
	var last int64
	same := true
	const n = 200_000
	for i := 0; i < n; i++ {
		x, y, z := a.Next(), b.Next(), c.Next()
		if x != y {
			t.Fatalf("same seed differs at %d: %d vs %d", i, x, y)
		}
		if x != z {
			same = false
		}
		if x < last {
			t.Fatalf("went backwards at %d", i)
		}
		last = x
	}
	if same {
		t.Error("different seeds gave the same schedule")
	}
	// mean gap within 1 % of 1 ms over 200k arrivals (σ/√n ≈ 0.2 %).
	mean := float64(last) / float64(n-1)
	if math.Abs(mean-1e6)/1e6 > 0.01 {
		t.Errorf("mean gap %.0f ns, want ≈ 1e6", mean)
	}
}
