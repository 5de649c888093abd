//go:build linux

package resp

import (
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/redisephemeral"
)

// countWork is a LoopWork that allocates nothing: a claim counter up to
// limit and the outcomes counted by class.
type countWork struct {
	next, limit uint64
	classes     [16]int
	msg         string // the last message of an outcome neither OK nor a miss
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
	if o.Class != driver.OK && o.Class != driver.Miss {
		w.msg = o.Msg
	}
}

func (w *countWork) Reconnected(string, int) { w.reconnects++ }

// The event loop's hot path allocates nothing per request once warmed up,
// on the peers scripts' cases against a real redis-server: GET one at a
// time and pipelined ×16, MGET of 1 and of 64 keys, and the seeds' JSON
// rows validated (MGET of 1 and 64 keys, GET ×16); every outcome a hit or
// an expected nil, every validated value equal to the reference. Measured
// with testing.AllocsPerRun over whole Runs of two lengths, N and 2N
// requests: a Run's fixed cost (its context.AfterFunc, the first batch) is
// the same in both, so the difference is what N more requests cost.
func TestLoopZeroAllocPerRequest(t *testing.T) {
	s := startRedis(t, redisephemeral.Options{})
	for i := 1; i <= 128; i += 2 {
		redisDo(t, s, "SET", "item:"+strconv.Itoa(i), `{"id":`+strconv.Itoa(i)+`}`)
	}
	for id := int64(1); id <= rowsKeySpace; id++ {
		if !rowsMissing(id) {
			redisDo(t, s, "SET", fmt.Sprintf(`CRUD:bench.public.items:{"id":%d}`, id), seedRow(id))
		}
	}
	addr := s.Addr()
	rows := func(cfg Config) Config {
		cfg.Addr, cfg.KeyTemplate, cfg.DB, cfg.KeySpace = addr, rowsTemplate, "bench", rowsKeySpace
		cfg.ValidateSampled, cfg.Reference = 1, seedReference
		return cfg
	}
	for _, tc := range []struct {
		name     string
		cfg      Config
		pipeline int
	}{
		{"GET", Config{Addr: addr, Command: CommandGET, KeySpace: 128}, 1},
		{"GET x16", Config{Addr: addr, Command: CommandGET, KeySpace: 128}, 16},
		{"MGET 1", Config{Addr: addr, Batch: 1, KeySpace: 128}, 1},
		{"MGET 64", Config{Addr: addr, Batch: 64, KeySpace: 128}, 1},
		{"JSON rows MGET 1 validated", rows(Config{Batch: 1}), 1},
		{"JSON rows MGET 64 validated", rows(Config{Batch: 64}), 1},
		{"JSON rows GET x16 validated", rows(Config{Command: CommandGET}), 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Timeout = 10 * time.Second
			d := newDriver(t, tc.cfg)
			l := openLoop(t, d, 4)
			ctx := testCtx(t)
			w := &countWork{}
			run := func(n uint64) func() {
				return func() {
					w.limit = w.next + n
					if err := l.Run(ctx, tc.pipeline, 0, w); err != nil {
						t.Fatal(err)
					}
				}
			}
			const n = 512
			for i := 0; i < 4; i++ {
				run(n)() // warm up: buffers grow
			}
			one := testing.AllocsPerRun(10, run(n))
			two := testing.AllocsPerRun(10, run(2*n))
			if got := w.classes[driver.OK] + w.classes[driver.Miss]; uint64(got) != w.next || w.reconnects != 0 {
				t.Fatalf("%d of %d requests answered (classes %v, last message %q), %d reconnects", got, w.next, w.classes, w.msg, w.reconnects)
			}
			// AllocsPerRun's figure is a whole number per Run: a
			// difference of 1 is less than 0.002 per request.
			if per := (two - one) / n; math.Abs(two-one) > 1 {
				t.Fatalf("%.0f allocations per Run of %d requests, %.0f per Run of %d: %.3f per request, want 0", one, n, two, 2*n, per)
			}
			st := d.Stats()
			if st.Hits == 0 || st.Nils == 0 || st.Mismatches != 0 || (tc.cfg.ValidateSampled > 0 && st.Validated != st.Hits+st.Nils) {
				t.Fatalf("stats %+v: want hits and nils, every value validated when asked, none differing", st)
			}
			t.Logf("%.0f allocations per Run of %d requests, %.0f per Run of %d", one, n, two, 2*n)
		})
	}
}
