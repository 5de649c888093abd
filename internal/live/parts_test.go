package live

import (
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
)

// TestAgentParts: a distributed run's points draw each agent's requests
// per second beside the merged load, one series per agent named by its
// index, in the order the agents first appear.
func TestAgentParts(t *testing.T) {
	var pts []Point
	for i := range 3 {
		p := point(i)
		p.Parts = []Part{{Agent: 2, Requests: p.Requests / 3}, {Agent: 0, Requests: p.Requests - p.Requests/3}}
		pts = append(pts, p)
	}
	sn := snapshot{state: state{current: "c#1", currentStart: time.Now(), points: pts}, now: time.Now()}
	series := panels(sn, 10*time.Second)[0].Series
	if len(series) != 3 || series[0].Name != "requests" || series[1].Name != "agent 2" || series[2].Name != "agent 0" {
		t.Fatalf("requests panel's series: %+v", series)
	}
	for i, sr := range series[1:] {
		if len(sr.Points) != 3 || sr.Points[2].Y != float64(pts[2].Parts[i].Requests) {
			t.Errorf("%s: %+v", sr.Name, sr.Points)
		}
	}
	h := currentHTML(sn)
	for _, want := range []string{"agent 2", "agent 0"} {
		if !strings.Contains(h, want) {
			t.Errorf("the sample in flight does not name %q", want)
		}
	}
	if local := panels(snapshot{state: state{current: "c#1", points: pts[:0]}}, time.Second); len(local[0].Series) != 1 {
		t.Errorf("a local run's requests panel has %d series, want 1", len(local[0].Series))
	}
}

// TestCapacityCurveGrows: a capacity search's finished steps draw the
// report's latency–throughput curve above the finished table, one point
// per offered rate so far; samples without a search draw none.
func TestCapacityCurveGrows(t *testing.T) {
	_, samples, _, err := result.ReadFile("../../examples/seeds/002/results/capacity-hello.json")
	if err != nil {
		t.Fatal(err)
	}
	var steps []*result.Sample
	rates := map[float64]bool{}
	for i := range samples {
		if samples[i].Search != nil {
			steps = append(steps, &samples[i])
		}
	}
	if len(steps) < 3 {
		t.Fatalf("%d search steps in the fixture", len(steps))
	}
	for n := 1; n <= len(steps); n++ {
		rates[steps[n-1].Search.Rate] = true
		h := finishedHTML(snapshot{state: state{finished: steps[:n]}, now: time.Now()})
		if !strings.Contains(h, "Latency against the achieved rate") {
			t.Fatalf("after %d steps: no capacity curve", n)
		}
		c, _ := report.CapacityCurve(steps[:n])
		if got := len(c.Series[0].Points); got > len(rates) || got == 0 {
			t.Errorf("after %d steps (%d rates): %d points on the p99 curve", n, len(rates), got)
		}
	}
	plain := fixtureSamples(t, "closed.json")
	if h := finishedHTML(snapshot{state: state{finished: []*result.Sample{&plain[0]}}}); strings.Contains(h, "achieved rate") {
		t.Errorf("a sample without a search drew a capacity curve")
	}
}
