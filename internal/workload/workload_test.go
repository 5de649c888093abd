package workload

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestKeysExact(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		seq  uint64
		op   Op
		keys []int64
	}{
		{"hot first", Config{Kind: Hot, Hot: 128, Batch: 1}, 0, Read, []int64{1}},
		{"hot k=1 wraps", Config{Kind: Hot, Hot: 128, Batch: 1}, 128, Read, []int64{1}},
		{"hot k=1 last", Config{Kind: Hot, Hot: 128, Batch: 1}, 127, Read, []int64{128}},
		{"hot k=16 seq 1", Config{Kind: Hot, Hot: 128, Batch: 16}, 1, Read, seqKeys(17, 16)},
		{"hot k=16 seq 7", Config{Kind: Hot, Hot: 128, Batch: 16}, 7, Read, seqKeys(113, 16)},
		{"hot k=16 seq 8 wraps to 1", Config{Kind: Hot, Hot: 128, Batch: 16}, 8, Read, seqKeys(1, 16)},
		{"hot k=5 H=7 straddles", Config{Kind: Hot, Rows: 10, Hot: 7, Batch: 5}, 1, Read, []int64{6, 7, 1, 2, 3}},
		{"hot k>H repeats", Config{Kind: Hot, Rows: 10, Hot: 3, Batch: 5}, 0, Read, []int64{1, 2, 3, 1, 2}},
		{"hot huge seq", Config{Kind: Hot, Hot: 128, Batch: 64}, math.MaxUint64, Read, hotRef(math.MaxUint64, 64, 128)},
		{"cold first", Config{Kind: Cold, Rows: 10, Batch: 4}, 0, Read, []int64{1, 2, 3, 4}},
		{"cold second", Config{Kind: Cold, Rows: 10, Batch: 4}, 1, Read, []int64{5, 6, 7, 8}},
		{"cold last truncated", Config{Kind: Cold, Rows: 10, Batch: 4}, 2, Read, []int64{9, 10}},
		{"cold past end", Config{Kind: Cold, Rows: 10, Batch: 4}, 3, Read, []int64{}},
		{"cold far past end", Config{Kind: Cold, Rows: 10, Batch: 4}, math.MaxUint64, Read, []int64{}},
		{"cold exact end", Config{Kind: Cold, Rows: 8, Batch: 4}, 2, Read, []int64{}},
		{"mixed read", Config{Kind: Mixed, Batch: 2}, 18, Read, []int64{37, 38}},
		{"mixed write 19", Config{Kind: Mixed, Batch: 2}, 19, Write, []int64{19*17%128 + 1}},
		{"mixed read 20", Config{Kind: Mixed, Batch: 2}, 20, Read, []int64{41, 42}},
		{"mixed write 39", Config{Kind: Mixed, Batch: 64}, 39, Write, []int64{39*17%128 + 1}},
		{"mixed every 4", Config{Kind: Mixed, WriteEvery: 4}, 3, Write, []int64{3*17%128 + 1}},
		{"writes 0", Config{Kind: Writes}, 0, Write, []int64{1}},
		{"writes 1", Config{Kind: Writes}, 1, Write, []int64{18}},
		{"writes 8", Config{Kind: Writes}, 8, Write, []int64{8*17%128 + 1}},
		{"writes H=10", Config{Kind: Writes, Rows: 10, Hot: 10}, 3, Write, []int64{3*17%10 + 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			op, keys := w.Keys(tt.seq, make([]int64, 0, w.Batch()))
			if op != tt.op || !reflect.DeepEqual(keys, tt.keys) {
				t.Errorf("Keys(%d) = %v %v, want %v %v", tt.seq, op, keys, tt.op, tt.keys)
			}
			if w.Op(tt.seq) != op {
				t.Errorf("Op(%d) = %v, Keys says %v", tt.seq, w.Op(tt.seq), op)
			}
		})
	}
}

func seqKeys(first int64, n int) []int64 {
	k := make([]int64, n)
	for i := range k {
		k[i] = first + int64(i)
	}
	return k
}

// hotRef is the hot formula with big-integer-free modular arithmetic done
// differently from the implementation, for the overflow case.
func hotRef(seq uint64, k int, h uint64) []int64 {
	out := make([]int64, k)
	for i := range out {
		// (seq·k + i) mod h, with seq·k reduced as a sum of k copies of seq mod h.
		var acc uint64
		for j := 0; j < k; j++ {
			acc = (acc + seq%h) % h
		}
		out[i] = int64((acc+uint64(i))%h + 1)
	}
	return out
}

func TestColdReadsEveryRowOnce(t *testing.T) {
	for _, tc := range []struct {
		rows  int64
		batch int
	}{{4096, 1}, {4096, 64}, {1000, 64}, {1, 16}, {17, 16}} {
		w, err := New(Config{Kind: Cold, Rows: tc.rows, Batch: tc.batch})
		if err != nil {
			t.Fatal(err)
		}
		want := (tc.rows + int64(tc.batch) - 1) / int64(tc.batch)
		if w.Requests() != want {
			t.Errorf("rows %d batch %d: Requests() = %d, want %d", tc.rows, tc.batch, w.Requests(), want)
		}
		seen := make([]int, tc.rows+1)
		buf := make([]int64, 0, tc.batch)
		for seq := uint64(0); seq < uint64(w.Requests()); seq++ {
			_, keys := w.Keys(seq, buf)
			if len(keys) == 0 {
				t.Fatalf("rows %d batch %d: request %d has no keys", tc.rows, tc.batch, seq)
			}
			for _, k := range keys {
				seen[k]++
			}
		}
		for k := int64(1); k <= tc.rows; k++ {
			if seen[k] != 1 {
				t.Fatalf("rows %d batch %d: row %d read %d times", tc.rows, tc.batch, k, seen[k])
			}
		}
	}
	if w, _ := New(Config{Kind: Hot}); w.Requests() != 0 {
		t.Errorf("hot Requests() = %d, want 0 (unbounded)", w.Requests())
	}
}

func TestWriteFraction(t *testing.T) {
	tests := []struct {
		cfg    Config
		n      uint64
		writes int
	}{
		{Config{Kind: Mixed}, 50000, 2500},
		{Config{Kind: Mixed, Batch: 64}, 50000, 2500},
		{Config{Kind: Mixed}, 39, 1},
		{Config{Kind: Mixed}, 40, 2},
		{Config{Kind: Mixed, WriteEvery: 10}, 1000, 100},
		{Config{Kind: Writes}, 1000, 1000},
		{Config{Kind: Hot, Batch: 16}, 1000, 0},
		{Config{Kind: Zipf, Batch: 16}, 1000, 0},
	}
	for _, tt := range tests {
		w, err := New(tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]int64, 0, w.Batch())
		writes, reads := 0, 0
		hotWrites := make(map[int64]int)
		for seq := uint64(0); seq < tt.n; seq++ {
			op, keys := w.Keys(seq, buf)
			switch op {
			case Write:
				writes++
				if len(keys) != 1 || keys[0] < 1 || keys[0] > w.Config().Hot {
					t.Fatalf("%+v seq %d: write keys %v, want one key in the hot set", tt.cfg, seq, keys)
				}
				hotWrites[keys[0]]++
			case Read:
				reads++
				if len(keys) != w.Batch() {
					t.Fatalf("%+v seq %d: read has %d keys, want %d", tt.cfg, seq, len(keys), w.Batch())
				}
			}
		}
		if writes != tt.writes || reads != int(tt.n)-tt.writes {
			t.Errorf("%+v over %d ops: %d writes %d reads, want %d writes", tt.cfg, tt.n, writes, reads, tt.writes)
		}
		// Mixed writes are operations 19, 39, 59, …: seq ≡ 19 (mod 20), and
		// gcd(20, 128) = 4, so (seq·17) % 128 visits 32 of the 128 hot rows,
		// evenly. Writes-only visits all 128.
		if tt.cfg.Kind == Mixed && tt.writes == 2500 {
			if len(hotWrites) != 32 {
				t.Errorf("mixed writes touched %d hot rows, want 32", len(hotWrites))
			}
			for k, c := range hotWrites {
				if c < 2500/32 || c > 2500/32+1 {
					t.Errorf("hot row %d written %d times, want %d or %d", k, c, 2500/32, 2500/32+1)
				}
			}
		}
		if tt.cfg.Kind == Writes && len(hotWrites) != 128 {
			t.Errorf("writes touched %d hot rows, want all 128", len(hotWrites))
		}
	}
}

func TestOpsAndIndex(t *testing.T) {
	for _, tc := range []struct {
		kind  Kind
		ops   []string
		write uint8
	}{
		{Hot, []string{"read"}, 0},
		{Mixed, []string{"read", "write"}, 1},
		{Writes, []string{"write"}, 0},
		{Uniform, []string{"read"}, 0},
	} {
		w, err := New(Config{Kind: tc.kind})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(w.Ops(), tc.ops) {
			t.Errorf("%s: Ops() = %v, want %v", tc.kind, w.Ops(), tc.ops)
		}
		if w.Index(Read) != 0 || w.Index(Write) != tc.write {
			t.Errorf("%s: Index(read)=%d Index(write)=%d", tc.kind, w.Index(Read), w.Index(Write))
		}
		if ops := w.Ops(); int(w.Index(w.Op(19))) >= len(ops) || ops[w.Index(w.Op(19))] != w.Op(19).String() {
			t.Errorf("%s: Ops()[Index(Op(19))] does not name Op(19)", tc.kind)
		}
	}
}

func TestRandomKindsReproducible(t *testing.T) {
	for _, kind := range []Kind{Uniform, Zipf} {
		cfg := Config{Kind: kind, Rows: 1000, Batch: 8, Seed: 42}
		a, _ := New(cfg)
		b, _ := New(cfg)
		other, _ := New(Config{Kind: kind, Rows: 1000, Batch: 8, Seed: 43})
		// b is asked in reverse order, as another worker might.
		want := make(map[uint64][]int64)
		for seq := uint64(0); seq < 500; seq++ {
			_, k := a.Keys(seq, nil)
			want[seq] = k
		}
		same := 0
		for seq := uint64(500); seq > 0; seq-- {
			_, k := b.Keys(seq-1, make([]int64, 0, 8))
			if !reflect.DeepEqual(k, want[seq-1]) {
				t.Fatalf("%s seq %d: %v then %v", kind, seq-1, want[seq-1], k)
			}
			_, o := other.Keys(seq-1, nil)
			if reflect.DeepEqual(o, k) {
				same++
			}
			for _, key := range k {
				if key < 1 || key > 1000 {
					t.Fatalf("%s: key %d out of 1 … 1000", kind, key)
				}
			}
		}
		if same > 5 {
			t.Errorf("%s: seeds 42 and 43 gave the same keys for %d of 500 requests", kind, same)
		}
	}
}

func TestUniformCoversRows(t *testing.T) {
	w, _ := New(Config{Kind: Uniform, Rows: 10, Batch: 10, Seed: 7})
	counts := make([]int, 11)
	const n = 20000
	for seq := uint64(0); seq < n/10; seq++ {
		_, keys := w.Keys(seq, nil)
		for _, k := range keys {
			counts[k]++
		}
	}
	for k := 1; k <= 10; k++ {
		if counts[k] < n/10*8/10 || counts[k] > n/10*12/10 {
			t.Errorf("uniform key %d drawn %d times of %d, want about %d", k, counts[k], n, n/10)
		}
	}
}

func TestZipfDistribution(t *testing.T) {
	for _, s := range []float64{0.5, 0.99, 1, 1.5} {
		const rows, n = 20, 200000
		w, err := New(Config{Kind: Zipf, Rows: rows, Batch: 100, ZipfS: s, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		counts := make([]float64, rows+1)
		for seq := uint64(0); seq < n/100; seq++ {
			_, keys := w.Keys(seq, nil)
			for _, k := range keys {
				counts[k]++
			}
		}
		var norm float64
		for k := 1; k <= rows; k++ {
			norm += math.Pow(float64(k), -s)
		}
		for k := 1; k <= rows; k++ {
			want := n * math.Pow(float64(k), -s) / norm
			// 5 standard deviations of a binomial count, and 10 % slack.
			tol := 5*math.Sqrt(want) + 0.1*want
			if math.Abs(counts[k]-want) > tol {
				t.Errorf("s=%v key %d: %v draws, want %.0f ± %.0f", s, k, counts[k], want, tol)
			}
		}
	}
}

func TestKeysDoesNotAllocate(t *testing.T) {
	for _, kind := range Kinds {
		cfg := Config{Kind: kind, Batch: 64}
		if kind == Writes {
			cfg.Batch = 1
		}
		w, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]int64, 0, w.Batch())
		seq := uint64(0)
		allocs := testing.AllocsPerRun(200, func() {
			_, buf = w.Keys(seq, buf)
			seq++
		})
		if allocs != 0 {
			t.Errorf("%s: Keys allocates %v times per call", kind, allocs)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Kind: "hott"}, `workload.kind "hott": accepted kinds are hot, cold, mixed, writes, uniform, zipf`},
		{Config{Rows: -1}, "workload.rows -1: must be at least 1"},
		{Config{Batch: -2}, "workload.batch -2"},
		{Config{Batch: MaxBatch + 1}, "workload.batch"},
		{Config{Hot: 5000}, "workload.hot 5000: must be between 1 and workload.rows (4096)"},
		{Config{Kind: Cold, Hot: 5}, "workload.hot 5: only hot, mixed and writes"},
		{Config{Kind: Hot, WriteEvery: 20}, "workload.write_every 20: only kind mixed"},
		{Config{Kind: Mixed, WriteEvery: 1}, "workload.write_every 1: must be at least 2"},
		{Config{Kind: Zipf, ZipfS: -1}, "workload.zipf_s -1: must be greater than 0"},
		{Config{Kind: Zipf, ZipfS: math.NaN()}, "workload.zipf_s NaN"},
		{Config{Kind: Uniform, ZipfS: 1.1}, "workload.zipf_s 1.1: only kind zipf"},
		{Config{Kind: Writes, Batch: 16}, "workload.batch 16: kind writes updates one row per request"},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", tt.cfg, err, tt.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	w, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	got := w.Config()
	want := Config{Kind: Hot, Rows: DefaultRows, Hot: DefaultHot, Batch: 1}
	if got != want {
		t.Errorf("defaults = %+v, want %+v", got, want)
	}
	m, _ := New(Config{Kind: "MIXED", Rows: 50})
	if c := m.Config(); c.Kind != Mixed || c.Hot != 50 || c.WriteEvery != 20 {
		t.Errorf("mixed defaults over 50 rows = %+v", c)
	}
	z, _ := New(Config{Kind: Zipf})
	if c := z.Config(); c.ZipfS != DefaultZipfS || c.Hot != 0 {
		t.Errorf("zipf defaults = %+v", c)
	}
}

func ExampleWorkload_Keys() {
	w, err := New(Config{Kind: Mixed, Batch: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	buf := make([]int64, 0, w.Batch())
	for _, seq := range []uint64{0, 1, 19, 20} {
		op, keys := w.Keys(seq, buf)
		fmt.Println(seq, op, keys)
	}
	// Output:
	// 0 read [1 2 3 4]
	// 1 read [5 6 7 8]
	// 19 write [68]
	// 20 read [81 82 83 84]
}
