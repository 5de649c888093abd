package load

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/result"
)

func TestShareOwnsEveryIndexOnce(t *testing.T) {
	for count := 1; count <= 7; count++ {
		const n = 1000
		owners := make([]int, n)
		total := int64(0)
		for i := 0; i < count; i++ {
			s := Share{Index: i, Count: count}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			got := s.Requests(n)
			total += got
			for j := uint64(0); j < uint64(got); j++ {
				seq := s.Seq(j)
				if seq >= n {
					t.Fatalf("share %s: request %d is seq %d ≥ %d", s, j, seq, n)
				}
				if !s.Owns(seq) {
					t.Fatalf("share %s: Seq(%d) = %d not owned", s, j, seq)
				}
				owners[seq]++
			}
		}
		if total != n {
			t.Errorf("count %d: shares' requests sum to %d, want %d", count, total, n)
		}
		for seq, o := range owners {
			if o != 1 {
				t.Fatalf("count %d: seq %d belongs to %d shares", count, seq, o)
			}
		}
	}
}

func TestShareSplitsConnectionsAndCounts(t *testing.T) {
	cases := []struct {
		total int
		count int
		want  []int
	}{
		{10, 3, []int{4, 3, 3}}, {3, 3, []int{1, 1, 1}}, {64, 1, []int{64}}, {1000, 3, []int{334, 333, 333}},
	}
	for _, c := range cases {
		var got, reqs []int
		for i := 0; i < c.count; i++ {
			s := Share{Index: i, Count: c.count}
			n, err := s.Connections(c.total)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, n)
			reqs = append(reqs, int(s.Requests(int64(c.total))))
		}
		if !slices.Equal(got, c.want) || !slices.Equal(reqs, c.want) {
			t.Errorf("%d over %d: connections %v, requests %v, want %v", c.total, c.count, got, reqs, c.want)
		}
	}
	if _, err := (Share{Index: 0, Count: 4}).Connections(3); err == nil {
		t.Error("3 connections over 4 agents accepted")
	}
	for _, bad := range []Share{{0, 0}, {3, 3}, {-1, 2}, {0, MaxShares + 1}} {
		if bad.Validate() == nil {
			t.Errorf("share %+v accepted", bad)
		}
	}
}

// dueTimes returns the due times before 1 s of share s of a pacer made by
// mk.
func dueTimes(t *testing.T, mk func() Pacer, s Share) []int64 {
	t.Helper()
	p := SharePacer(mk(), s)
	var out []int64
	for {
		d := p.Next()
		if d >= 1e9 {
			return out
		}
		out = append(out, d)
	}
}

// TestSharePacerInterleaves splits 1,000 req/s three ways: 334 + 333 + 333
// due times in the first second, and merged they are exactly the single
// machine's schedule, share i holding every third due time from the i-th,
// for constant and Poisson arrivals alike.
func TestSharePacerInterleaves(t *testing.T) {
	pacers := map[string]func() Pacer{
		"constant": func() Pacer { p, _ := NewConstantPacer(1000); return p },
		"poisson":  func() Pacer { p, _ := NewPoissonPacer(1000, 42); return p },
	}
	for name, mk := range pacers {
		whole := dueTimes(t, mk, Whole)
		var parts [][]int64
		var merged []int64
		for i := 0; i < 3; i++ {
			d := dueTimes(t, mk, Share{Index: i, Count: 3})
			parts = append(parts, d)
			merged = append(merged, d...)
		}
		if name == "constant" {
			if len(parts[0]) != 334 || len(parts[1]) != 333 || len(parts[2]) != 333 {
				t.Errorf("%s: shares of 1,000 req/s hold %d + %d + %d requests, want 334 + 333 + 333", name, len(parts[0]), len(parts[1]), len(parts[2]))
			}
		}
		slices.Sort(merged)
		if !slices.Equal(merged, whole) {
			t.Fatalf("%s: merged shares (%d due times) differ from the whole schedule (%d)", name, len(merged), len(whole))
		}
		for k, d := range whole {
			if parts[k%3][k/3] != d {
				t.Fatalf("%s: due time %d (%d ns) is not share %d's %d-th", name, k, d, k%3, k/3)
			}
		}
	}
}

// TestEngineSharesSendEachSeqOnce runs three engines on the shares of one
// count-bounded window, closed loop and rate: each sequence number is sent
// by exactly one engine, and all of them are sent.
func TestEngineSharesSendEachSeqOnce(t *testing.T) {
	for _, cfg := range []Config{
		{EngineConfig: result.EngineConfig{Connections: 5, Pipeline: 4}},
		{EngineConfig: result.EngineConfig{Connections: 5, Pipeline: 1, Rate: 20000}},
		{EngineConfig: result.EngineConfig{Connections: 5, Pipeline: 1, Rate: 20000, Arrival: "poisson", Seed: 7}},
	} {
		for _, n := range []int64{1001, 2} { // 2: the third share has none
			engineShares(t, cfg, n)
		}
	}
}

func engineShares(t *testing.T, cfg Config, n int64) {
	t.Helper()
	seen := map[uint64]int{}
	var total int64
	for i := 0; i < 3; i++ {
		sc, err := Share{Index: i, Count: 3}.Config(cfg)
		if err != nil {
			t.Fatal(err)
		}
		d := &fakeDriver{maxPipe: 8, seqSeen: map[uint64]int{}}
		e, err := New(sc, d)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		res, err := e.Run(context.Background(), Window{Requests: n, Duration: 20 * time.Second})
		e.Close()
		if err != nil {
			t.Fatal(err)
		}
		if want := (Share{Index: i, Count: 3}).Requests(n); res.Requests != want {
			t.Errorf("%+v share %d: %d requests, want %d", cfg, i, res.Requests, want)
		}
		total += res.Requests
		for s, c := range d.seqSeen {
			seen[s] += c
		}
	}
	if total != n || int64(len(seen)) != n {
		t.Errorf("%+v: %d requests, %d distinct seqs, want %d", cfg, total, len(seen), n)
	}
	for s := uint64(0); s < uint64(n); s++ {
		if seen[s] != 1 {
			t.Fatalf("%+v: seq %d sent %d times", cfg, s, seen[s])
		}
	}
}
