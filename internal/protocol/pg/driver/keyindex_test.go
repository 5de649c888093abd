package pg

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestKeyIndexPlacesLikeAMap: placing rows through the index gives what the
// map it replaced gave (every position of a key gets its row, the last row
// of a key wins, keys with no row stay nil, rows of other keys go nowhere),
// for duplicates, extreme keys, colliding probes and empty requests, and a
// rebuild forgets the previous request's keys.
func TestKeyIndexPlacesLikeAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var x keyIndex
	for round := 0; round < 500; round++ {
		n := r.IntN(130)
		keys := make([]int64, n)
		for i := range keys {
			switch r.IntN(4) {
			case 0:
				keys[i] = int64(r.IntN(8)) // many duplicates
			case 1:
				keys[i] = []int64{math.MinInt64, math.MaxInt64, -1, 0}[r.IntN(4)]
			case 2:
				keys[i] = int64(r.IntN(64)) << 58 // the same high bits: probes collide
			default:
				keys[i] = r.Int64()
			}
		}
		x.build(keys)
		got := make([]any, n)
		want := map[int64]any{}
		for j := 0; j < n+5; j++ {
			k := int64(r.IntN(16))
			if j < n && r.IntN(3) > 0 {
				k = keys[r.IntN(n)]
			}
			v := any(j)
			inKeys := false
			for _, kk := range keys {
				inKeys = inKeys || kk == k
			}
			if placed := x.place(got, k, v); placed != inKeys {
				t.Fatalf("round %d: place(%d) = %v, key among the request's: %v", round, k, placed, inKeys)
			}
			want[k] = v
		}
		wantRows := make([]any, n)
		for i, k := range keys {
			wantRows[i] = want[k]
		}
		if !reflect.DeepEqual(got, wantRows) {
			t.Fatalf("round %d keys %v:\nrows %v\nwant %v", round, keys, got, wantRows)
		}
	}
	x.build([]int64{1, 2})
	if x.place(make([]any, 2), 3, 0) || !x.place(make([]any, 2), 2, 0) {
		t.Error("a rebuilt index answers for other keys than its own")
	}
}
