package execute

import (
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/live"
	"github.com/benchrig/benchrig/internal/load"
)

// TestFromProgress: a live point is the counts since the previous reading,
// the latest complete second's percentiles and each agent's share of the
// second; a new window (counts and elapsed time falling) counts from 0.
func TestFromProgress(t *testing.T) {
	var last load.Progress
	read := func(pr load.Progress) live.Point {
		var pt live.Point
		fromProgress(&pt, pr, &last)
		return pt
	}
	parts := func(a, b int64) []load.Progress {
		return []load.Progress{{Agent: 0, Requests: a}, {Agent: 1, Requests: b}}
	}
	pt := read(load.Progress{Running: true, Elapsed: time.Second, Requests: 100, Failures: 2, Misses: 1, Second: load.LiveSecond{T: -1}, Parts: parts(60, 40)})
	if pt.Requests != 100 || pt.Errors != 2 || pt.Misses != 1 || pt.P99US != 0 {
		t.Errorf("first reading: %+v", pt)
	}
	pt = read(load.Progress{Running: true, Elapsed: 2 * time.Second, Requests: 250, Failures: 2, Misses: 4,
		Second: load.LiveSecond{T: 0, Requests: 100, P50US: 900, P99US: 2000}, Parts: parts(150, 100)})
	if pt.Requests != 150 || pt.Errors != 0 || pt.Misses != 3 || pt.P50US != 900 || pt.P99US != 2000 {
		t.Errorf("second reading: %+v", pt)
	}
	if len(pt.Parts) != 2 || pt.Parts[0] != (live.Part{Agent: 0, Requests: 90}) || pt.Parts[1] != (live.Part{Agent: 1, Requests: 60}) {
		t.Errorf("second reading's parts: %+v", pt.Parts)
	}
	pt = read(load.Progress{Running: true, Elapsed: 500 * time.Millisecond, Requests: 30, Second: load.LiveSecond{T: -1}})
	if pt.Requests != 30 || pt.Errors != 0 || pt.Parts != nil {
		t.Errorf("a new window's first reading: %+v", pt)
	}
}
