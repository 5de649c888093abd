package agent

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
)

// fakePart builds a part of secs seconds with n latencies per second drawn
// from rng, returning the part and the histogram of all its values.
func fakePart(t testing.TB, rng *rand.Rand, secs, n int, rate bool) (*Part, *hdr.Histogram) {
	t.Helper()
	all := result.NewHistogram()
	l := &result.Load{Mode: "closed", Connections: 2, Pipeline: 1, Seconds: float64(secs), Messages: map[string]int64{"error: reset": 1}}
	for s := 0; s < secs; s++ {
		for i := 0; i < n; i++ {
			_ = all.RecordValue(int64(50 + rng.IntN(20000)))
		}
		l.Timeline = append(l.Timeline, result.Second{T: s, Requests: int64(n), Bytes: int64(10 * n), Errors: 1})
	}
	p := &Part{Load: l}
	var err error
	if l.Latency, err = result.Summarise(all); err != nil {
		t.Fatal(err)
	}
	l.Requests = all.TotalCount()
	l.Sent = l.Requests + int64(secs)
	l.Errors = int64(secs)
	l.Bytes = 10 * l.Requests
	l.Client = result.Client{UserSeconds: 0.5, SystemSeconds: 0.25, UsableCores: 2}
	if rate {
		l.Mode = "rate"
		s, _ := result.Summarise(all)
		l.Service = &s
		lag, _ := result.Summarise(result.NewHistogram())
		l.Rate = &result.RateStats{Arrival: "constant", Scheduled: l.Sent, Lag: lag}
	}
	return p, all
}

// withSeconds fills a part's per-second histograms with the values of its
// timeline drawn again from the same seed, as the engine would have kept
// them.
func withSeconds(t testing.TB, seed uint64, secs, n int) [][]int64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([][]int64, secs)
	for s := 0; s < secs; s++ {
		sh := load.NewSecondHistogram()
		for i := 0; i < n; i++ {
			_ = sh.RecordValue(int64(50 + rng.IntN(20000)))
		}
		out[s] = load.SparseBuckets(sh)
	}
	return out
}

func parts(t testing.TB, k, secs, n int, rate bool) ([]Placed, *hdr.Histogram) {
	want := result.NewHistogram()
	start := time.Unix(1_700_000_000, 0)
	var out []Placed
	for i := 0; i < k; i++ {
		seed := uint64(i + 1)
		p, all := fakePart(t, rand.New(rand.NewPCG(seed, 1)), secs, n, rate)
		p.Seconds = withSeconds(t, seed, secs, n)
		want.Merge(all)
		// agents start within a few ms of each other; agent 2 a whole
		// second late (its timeline is shifted by one).
		st := start.Add(time.Duration(i) * time.Millisecond)
		if i == 2 {
			st = start.Add(time.Second)
		}
		out = append(out, Placed{Part: p, Start: st})
	}
	return out, want
}

// TestMergeIsExact: the merged histogram's count is the sum of the parts'
// exactly and its percentiles are those of all the values together; the
// counters are summed; the merged timeline sums the parts, aligned.
func TestMergeIsExact(t *testing.T) {
	for _, rate := range []bool{false, true} {
		ps, want := parts(t, 4, 3, 500, rate)
		res, err := Merge(ps, load.Config{EngineConfig: result.EngineConfig{Connections: 8, Rate: 2000}}, load.Window{Duration: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		var sumCount, sumSent int64
		for _, p := range ps {
			sumCount += p.Part.Load.Latency.Count
			sumSent += p.Part.Load.Sent
		}
		if res.Latency.Count != sumCount || res.Requests != sumCount || res.Latency.Count != want.TotalCount() {
			t.Errorf("merged count %d (requests %d), parts sum %d, all values %d", res.Latency.Count, res.Requests, sumCount, want.TotalCount())
		}
		for _, q := range result.Quantiles {
			if got, w := res.Latency.P(q), want.ValueAtQuantile(q); got != w {
				t.Errorf("p%v: merged %d, all values %d", q, got, w)
			}
		}
		if res.Sent != sumSent || res.Connections != 8 || res.Messages["error: reset"] != 4 || res.Errors != 12 {
			t.Errorf("counters: sent %d (want %d), connections %d, messages %v, errors %d", res.Sent, sumSent, res.Connections, res.Messages, res.Errors)
		}
		// agents 0, 1, 3 cover seconds 0–2, agent 2 seconds 1–3.
		wantTL := []int64{1500, 2000, 2000, 500}
		if len(res.Timeline) != len(wantTL) {
			t.Fatalf("timeline %d seconds, want %d: %+v", len(res.Timeline), len(wantTL), res.Timeline)
		}
		var tl int64
		for i, s := range res.Timeline {
			if s.T != i || s.Requests != wantTL[i] || s.Errors != wantTL[i]/500 {
				t.Errorf("second %d: %+v, want %d requests", i, s, wantTL[i])
			}
			tl += s.Requests
			if s.P50US <= 0 || s.P99US < s.P50US {
				t.Errorf("second %d: p50 %d p99 %d", i, s.P50US, s.P99US)
			}
		}
		// second 0 holds agents 0, 1 and 3's first seconds: its
		// percentiles are those of their values together.
		sec0 := load.NewSecondHistogram()
		for _, k := range []int{0, 1, 3} {
			pairs := ps[k].Part.Seconds[0]
			for i := 0; i < len(pairs); i += 2 {
				_ = sec0.RecordValues(pairs[i], pairs[i+1])
			}
		}
		if res.Timeline[0].P50US != sec0.ValueAtQuantile(50) || res.Timeline[0].P99US != sec0.ValueAtQuantile(99) {
			t.Errorf("second 0: p50 %d p99 %d, want %d %d", res.Timeline[0].P50US, res.Timeline[0].P99US, sec0.ValueAtQuantile(50), sec0.ValueAtQuantile(99))
		}
		if tl != res.Requests {
			t.Errorf("timeline sums to %d, requests %d", tl, res.Requests)
		}
		if res.Client.UserSeconds != 2 || res.Client.SystemSeconds != 1 || res.Client.UsableCores != 8 {
			t.Errorf("client %+v", res.Client)
		}
		if rate {
			if res.Rate == nil || res.Rate.Target != 2000 || res.Rate.Scheduled != sumSent || res.Service == nil || res.Service.Count != sumCount {
				t.Errorf("rate figures %+v service %+v", res.Rate, res.Service)
			}
		}
	}
}

func TestMergeRefusesNothing(t *testing.T) {
	if _, err := Merge(nil, load.Config{}, load.Window{}); err == nil {
		t.Error("merged no parts")
	}
	bad := []Placed{{Part: &Part{Load: &result.Load{Latency: result.Latency{Count: 3}}}, Start: time.Now()}}
	if _, err := Merge(bad, load.Config{}, load.Window{Duration: time.Second}); err == nil {
		t.Error("merged a part with values but no histogram")
	}
}

func TestOffsetOf(t *testing.T) {
	// agent clock 5 ms ahead; 2 ms each way; 1 ms in the agent.
	const ms = int64(time.Millisecond)
	o := offsetOf(0, 7*ms, 8*ms, 5*ms)
	if o.Offset != 5*time.Millisecond || o.RTT != 4*time.Millisecond {
		t.Errorf("offset %s rtt %s, want 5ms 4ms", o.Offset, o.RTT)
	}
	if b := best(o, Offset{Offset: time.Millisecond, RTT: time.Millisecond}, false); b.RTT != time.Millisecond {
		t.Errorf("best kept the longer round trip")
	}
}

// BenchmarkMerge is the coordinator's merge of one sample's parts: 10, 100
// and 1,000 simulated agents, each with 60 s of timeline.
func BenchmarkMerge(b *testing.B) {
	for _, k := range []int{10, 100, 1000} {
		ps, _ := parts(b, k, 60, 200, true)
		b.Run(fmt.Sprintf("parts=%d", k), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Merge(ps, load.Config{EngineConfig: result.EngineConfig{Connections: k, Rate: 1000}}, load.Window{Duration: time.Minute}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestMergeRefusesFarSeconds: a part whose timeline names a second far
// past its window (a broken or hostile agent) is refused with the bound,
// not merged into a timeline of that many rows.
func TestMergeRefusesFarSeconds(t *testing.T) {
	far := &Part{Load: &result.Load{Seconds: 2, Requests: 1, Timeline: []result.Second{{T: 1 << 40, Requests: 1}}}}
	_, err := Merge([]Placed{{Part: far, Start: time.Unix(0, 0)}}, load.Config{}, load.Window{Duration: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "outside the window of 2.0 s (0 to 62 accepted)") {
		t.Errorf("merge of a part naming second 2^40: %v", err)
	}
	late := &Part{Load: &result.Load{Seconds: 2}}
	_, err = Merge([]Placed{{Part: late, Start: time.Unix(0, 0)}, {Part: late, Start: time.Unix(1<<30, 0)}}, load.Config{}, load.Window{Duration: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "at most 1048576 s accepted") {
		t.Errorf("merge of a part starting 2^30 s late: %v", err)
	}
}
