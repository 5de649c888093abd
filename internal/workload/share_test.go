package workload

import "testing"

// TestColdSharesReadEveryRowOnce splits cold sweeps over 1 to 5 agents:
// every row is read by exactly one request of exactly one share.
func TestColdSharesReadEveryRowOnce(t *testing.T) {
	for _, c := range []struct {
		rows  int64
		batch int
	}{{4096, 1}, {4096, 16}, {1001, 64}, {7, 3}} {
		w, err := New(Config{Kind: Cold, Rows: c.rows, Batch: c.batch})
		if err != nil {
			t.Fatal(err)
		}
		for count := 1; count <= 5; count++ {
			reads := make([]int, c.rows+1)
			var total int64
			buf := make([]int64, 0, w.Batch())
			for i := 0; i < count; i++ {
				n := w.ShareRequests(i, count)
				total += n
				for j := uint64(0); j < uint64(n); j++ {
					_, keys := w.Keys(ShareSeq(i, count, j), buf)
					for _, k := range keys {
						reads[k]++
					}
				}
			}
			if total != w.Requests() {
				t.Errorf("rows %d batch %d over %d: %d requests, want %d", c.rows, c.batch, count, total, w.Requests())
			}
			for row := int64(1); row <= c.rows; row++ {
				if reads[row] != 1 {
					t.Fatalf("rows %d batch %d over %d: row %d read %d times", c.rows, c.batch, count, row, reads[row])
				}
			}
		}
	}
	hot, _ := New(Config{Kind: Hot})
	if hot.ShareRequests(0, 3) != 0 {
		t.Error("a hot workload has no natural request count to share")
	}
}
