//go:build linux

package pg

import (
	"testing"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/workload"
)

// countWork is a LoopWork that allocates nothing: a claim counter up to
// limit and the outcomes counted by class.
type countWork struct {
	next, limit uint64
	classes     [16]int
	msg         string // the last message of an outcome not OK
	reconnects  int
}

func (w *countWork) Claim(n int) (uint64, int) {
	if w.next >= w.limit {
		return 0, 0
	}
	k := min(uint64(n), w.limit-w.next)
	seq := w.next
	w.next += k
	return seq, int(k)
}

func (w *countWork) Record(o *driver.Outcome, _ int64) {
	w.classes[o.Class]++
	if o.Class != driver.OK {
		w.msg = o.Msg
	}
}

func (w *countWork) Reconnected(string, int) { w.reconnects++ }

// TestLoopZeroAllocPerRequest: in the steady state the pg driver's event
// loop allocates nothing per request, on every path and result shape:
// 64-key any reads (each form), single-key and 3-key prepared-one reads,
// the sql path's shapes, and a mixed workload's writes, every request OK
// with its rows decoded. Every allocation of the measured Runs is sampled
// (runtime.MemProfileRate = 1) and charged to the innermost function of
// this module on its stack: none may be this package's. The event loop's
// skeleton (package evloop) is charged apart: testing.AllocsPerRun gives
// the whole, logged per request beside evloop's share.
func TestLoopZeroAllocPerRequest(t *testing.T) {
	const n = 64
	for _, tc := range []struct {
		cfg   Config
		conns int
	}{
		{Config{Path: Any, Workload: workload.Config{Kind: workload.Uniform, Batch: 64, Seed: 1}}, 4},
		{Config{Path: Any, Form: FormArray, Workload: workload.Config{Kind: workload.Uniform, Batch: 64, Seed: 2}}, 4},
		{Config{Path: Any, Form: FormIn, Workload: workload.Config{Kind: workload.Zipf, Batch: 16, Seed: 3}}, 4},
		{Config{Path: PreparedOne, Workload: workload.Config{Kind: workload.Uniform, Batch: 1, Seed: 4}}, 4},
		{Config{Path: PreparedOne, Workload: workload.Config{Kind: workload.Uniform, Batch: 3, Seed: 5}}, 4},
		{Config{Path: SQL, SQL: sqlRows, Workload: workload.Config{Kind: workload.Uniform, Batch: 64, Seed: 6}}, 4},
		{Config{Path: SQL, SQL: sqlTextArray, Workload: workload.Config{Kind: workload.Uniform, Batch: 64, Seed: 7}}, 4},
		{Config{Path: SQL, SQL: sqlJSONArray, Workload: workload.Config{Kind: workload.Uniform, Batch: 64, Seed: 8}}, 4},
		// One connection: it alternates reads and writes (with several,
		// one could see only reads while warming up, then its first
		// write, whose buffers grow, while measured). The writes leave
		// the rows as they are, for the package's other tests.
		{Config{Path: Any, UpdateSQL: "UPDATE items SET revision = revision WHERE id = $1",
			Workload: workload.Config{Kind: workload.Mixed, WriteEvery: 2, Batch: 8}}, 1},
	} {
		cfg := tc.cfg
		t.Run(cfg.WithDefaults().Label()+"/"+string(cfg.Workload.Kind), func(t *testing.T) {
			d := loopDriver(t, cfg)
			ctx := testCtx(t)
			l, err := d.OpenLoop(ctx, tc.conns)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			w := &countWork{}
			run := func() {
				w.limit += n
				if err := l.Run(ctx, 1, 0, w); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < 4; i++ {
				run() // warm up: buffers, slabs, slot maps grow
			}
			start := w.next
			by := allocsByOwner(func() {
				for i := 0; i < 4; i++ {
					run()
				}
			})
			reqs := float64(w.next - start)
			whole := testing.AllocsPerRun(4, run)
			if w.classes[driver.OK] != int(w.next) {
				t.Fatalf("%d of %d requests OK (classes %v, last message %q)", w.classes[driver.OK], w.next, w.classes, w.msg)
			}
			if k := by.count[thisPackage]; k != 0 {
				t.Errorf("%d allocations by the pg driver in %.0f requests (%d reconnects), want none; the first:\n%s", k, reqs, w.reconnects, by.stack[thisPackage])
			}
			t.Logf("per request: %.2f allocations in all (AllocsPerRun of a Run of %d), of which evloop's %.2f",
				whole/n, n, float64(by.count[evloopPackage])/reqs)
		})
	}
}
