package report

import (
	"math"
	"sort"
)

// dist summarises per-second values the way autocannon does for its Req/Sec
// and Bytes/Sec rows: percentiles (nearest rank), mean, stdev, min.
type dist struct {
	p1, p2_5, p50, p97_5, mean, stdev, min float64
	n                                      int
}

func summarise(vals []float64) dist {
	d := dist{n: len(vals)}
	if len(vals) == 0 {
		return d
	}
	s := append([]float64(nil), vals...)
	sort.Float64s(s)
	rank := func(q float64) float64 {
		i := int(math.Ceil(q/100*float64(len(s)))) - 1
		if i < 0 {
			i = 0
		}
		return s[i]
	}
	d.p1, d.p2_5, d.p50, d.p97_5 = rank(1), rank(2.5), rank(50), rank(97.5)
	d.min = s[0]
	var sum float64
	for _, v := range s {
		sum += v
	}
	d.mean = sum / float64(len(s))
	var sq float64
	for _, v := range s {
		sq += (v - d.mean) * (v - d.mean)
	}
	if len(s) > 1 {
		d.stdev = math.Sqrt(sq / float64(len(s)-1))
	}
	return d
}
