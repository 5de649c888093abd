package result

import (
	"math/rand/v2"
	"sync"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// encodeCases are histograms of every shape a results file holds, and of
// others: empty, one value (0, 1, the top), latency-like spreads, the
// whole range, long runs of zeros, counts that take every ZigZag length,
// other geometries and a conversion ratio read from another tool's file.
func encodeCases(t testing.TB) map[string]*hdr.Histogram {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	cases := map[string]*hdr.Histogram{"empty": NewHistogram()}
	one := func(name string, v int64) {
		h := NewHistogram()
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
		cases[name] = h
	}
	one("zero", 0)
	one("one", 1)
	one("top", HistMaxUS)
	lat := NewHistogram()
	for i := 0; i < 200000; i++ {
		_ = lat.RecordValue(int64(50 + r.ExpFloat64()*400))
	}
	cases["latency"] = lat
	wide := NewHistogram()
	for i := 0; i < 5000; i++ {
		_ = wide.RecordValue(r.Int64N(HistMaxUS + 1))
	}
	cases["whole range"] = wide
	big := NewHistogram()
	for i, n := range []int64{1, 63, 64, 8191, 8192, 1 << 20, 1 << 27, 1 << 34, 1 << 41, 1 << 48, 1 << 55, 1<<62 - 1} {
		_ = big.RecordValues(int64(10+i*1000), n)
	}
	cases["every ZigZag length"] = big
	other := hdr.New(1, 3_600_000_000, 2)
	for i := 0; i < 1000; i++ {
		_ = other.RecordValue(r.Int64N(3_600_000_000))
	}
	cases["other geometry"] = other
	snap := lat.Export()
	snap.IntegerToDoubleConversionRatio = 0.001
	ratio := hdr.Import(snap)
	cases["conversion ratio"] = ratio
	if enc, err := lat.Encode(hdr.V2CompressedEncodingCookieBase); err != nil {
		t.Fatal(err)
	} else if dec, err := hdr.Decode(enc); err != nil {
		t.Fatal(err)
	} else {
		cases["decoded"] = dec
	}
	return cases
}

// TestEncodeHistogramMatchesLibrary: encodeHistogram writes exactly what
// hdrhistogram-go's Encode writes, and it decodes to the same histogram;
// twice in a row (a writer reused from the pool) and from 8 goroutines.
func TestEncodeHistogramMatchesLibrary(t *testing.T) {
	cases := encodeCases(t)
	for name, h := range cases {
		want, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for range 2 {
			if got, err = encodeHistogram(h); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got != string(want) {
				t.Fatalf("%s: encoded\n%s\nthe library's\n%s", name, got, want)
			}
		}
		dec, err := hdr.Decode([]byte(got))
		if err != nil || !dec.Equals(h) && h.TotalCount() != 0 {
			t.Errorf("%s: decodes to another histogram (%v)", name, err)
		}
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for name, h := range cases {
				want, _ := h.Encode(hdr.V2CompressedEncodingCookieBase)
				if got, err := encodeHistogram(h); err != nil || got != string(want) {
					t.Errorf("%s, concurrently: differs (%v)", name, err)
				}
			}
		})
	}
	wg.Wait()
}

// TestEncodeHistogramAllocs: a latency distribution is encoded with a few
// allocations (the counts' copy and the string), where the library's
// Encode makes a compressor of ~800 kB and a slice per count.
func TestEncodeHistogramAllocs(t *testing.T) {
	h := encodeCases(t)["latency"]
	if _, err := encodeHistogram(h); err != nil { // the pool's first writer
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(20, func() { _, _ = encodeHistogram(h) }); n > 8 {
		t.Errorf("%v allocations per encoding, want at most 8", n)
	}
}

func BenchmarkEncodeHistogram(b *testing.B) {
	h := encodeCases(b)["latency"]
	b.Run("benchrig", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeHistogram(h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := h.Encode(hdr.V2CompressedEncodingCookieBase); err != nil {
				b.Fatal(err)
			}
		}
	})
}
