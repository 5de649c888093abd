package result

import (
	"fmt"
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds shared by every recorder: 1 µs to 60 s at 3 significant
// digits, values in microseconds.
const (
	HistMinUS   = 1
	HistMaxUS   = 60_000_000
	HistSigFigs = 3
)

// NewHistogram returns an empty histogram with the shared bounds.
func NewHistogram() *hdr.Histogram { return hdr.New(HistMinUS, HistMaxUS, HistSigFigs) }

// Quantiles reported in every latency summary, in percent.
var Quantiles = []float64{1, 2.5, 10, 25, 50, 75, 90, 97.5, 99, 99.9, 99.99}

// Percentile is one point of a latency distribution.
type Percentile struct {
	Q  float64 `json:"q"`  // percent, e.g. 99.9
	US int64   `json:"us"` // microseconds
}

// Latency summarises one latency distribution and carries the histogram
// itself, encoded, so files can be merged and re-analysed later.
type Latency struct {
	Count       int64        `json:"count"`
	MinUS       int64        `json:"min_us"`
	MaxUS       int64        `json:"max_us"`
	MeanUS      float64      `json:"mean_us"`
	StdevUS     float64      `json:"stdev_us"`
	Percentiles []Percentile `json:"percentiles"`
	// Histogram is the HdrHistogram V2 compressed, base64 encoding.
	Histogram string `json:"histogram"`
}

// Summarise builds a Latency from a histogram of microsecond values.
func Summarise(h *hdr.Histogram) (Latency, error) {
	l := Latency{Count: h.TotalCount()}
	if l.Count > 0 {
		l.MinUS = h.Min()
		l.MaxUS = h.Max()
		l.MeanUS = round3(h.Mean())
		l.StdevUS = round3(h.StdDev())
	}
	for _, q := range Quantiles {
		l.Percentiles = append(l.Percentiles, Percentile{Q: q, US: h.ValueAtQuantile(q)})
	}
	enc, err := encodeHistogram(h)
	if err != nil {
		return l, fmt.Errorf("encode histogram: %w", err)
	}
	l.Histogram = enc
	return l, nil
}

// P returns the percentile q (percent) from the summary, or -1 if it was not
// recorded.
func (l Latency) P(q float64) int64 {
	for _, p := range l.Percentiles {
		if p.Q == q {
			return p.US
		}
	}
	return -1
}

// Decode restores the histogram carried by the summary.
func (l Latency) Decode() (*hdr.Histogram, error) {
	if l.Histogram == "" {
		return NewHistogram(), nil
	}
	h, err := hdr.Decode([]byte(l.Histogram))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

func round3(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return math.Round(v*1000) / 1000
}
