package load

import (
	"context"
	"testing"
	"time"
)

func TestRateScheduleAndCoverage(t *testing.T) {
	d := &fakeDriver{}
	e, _ := run(t, Config{Connections: 4, Pipeline: 1, Rate: 1000}, d, Window{})
	res, err := e.Run(context.Background(), Window{Duration: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rate == nil || res.Service == nil {
		t.Fatal("rate figures missing")
	}
	if res.Rate.Scheduled != 500 || res.Requests != 500 {
		t.Errorf("scheduled %d completed %d, want 500 each", res.Rate.Scheduled, res.Requests)
	}
	if res.Rate.Coverage != 100 || res.Rate.Dropped != 0 {
		t.Errorf("coverage %.2f dropped %d", res.Rate.Coverage, res.Rate.Dropped)
	}
	if res.Rate.Lag.Count != 500 {
		t.Errorf("lag recorded %d times", res.Rate.Lag.Count)
	}
}

func TestRateCountBound(t *testing.T) {
	d := &fakeDriver{}
	e, _ := run(t, Config{Connections: 2, Pipeline: 1, Rate: 2000}, d, Window{})
	res, err := e.Run(context.Background(), Window{Requests: 300})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 300 || d.done.Load() != 300 {
		t.Errorf("completed %d performed %d, want 300", res.Requests, d.done.Load())
	}
	if res.Rate.Coverage < 99.9 || res.Rate.Coverage > 100.1 {
		t.Errorf("coverage %.2f", res.Rate.Coverage)
	}
}

// A target slower than the rate: one connection at 5 ms per request can do
// 200/s of the 1000/s asked. The backlog (10) fills; the rest are dropped,
// counted, and the corrected latency exceeds the service time.
func TestRateBacklogBoundedDrops(t *testing.T) {
	d := &fakeDriver{delay: 5 * time.Millisecond}
	e, _ := run(t, Config{Connections: 1, Pipeline: 1, Rate: 1000, MaxBacklog: 10}, d, Window{})
	res, err := e.Run(context.Background(), Window{Duration: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rate
	if r.Dropped == 0 || r.Late == 0 {
		t.Fatalf("dropped %d late %d, want both > 0", r.Dropped, r.Late)
	}
	if r.Scheduled != 400 || res.Sent+r.Dropped != r.Scheduled {
		t.Errorf("scheduled %d = sent %d + dropped %d?", r.Scheduled, res.Sent, r.Dropped)
	}
	if r.Coverage > 50 {
		t.Errorf("coverage %.1f %%, want well under 100", r.Coverage)
	}
	if res.Latency.P(99) <= res.Service.P(99) {
		t.Errorf("corrected p99 %d µs should exceed service p99 %d µs", res.Latency.P(99), res.Service.P(99))
	}
}

func TestPoissonRateReproducibleCount(t *testing.T) {
	count := func() int64 {
		d := &fakeDriver{}
		e, _ := run(t, Config{Connections: 2, Pipeline: 1, Rate: 2000, Arrival: "poisson", Seed: 7}, d, Window{})
		res, err := e.Run(context.Background(), Window{Duration: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return res.Rate.Scheduled
	}
	a, b := count(), count()
	if a != b {
		t.Errorf("same seed scheduled %d then %d", a, b)
	}
	if a < 500 || a > 700 {
		t.Errorf("scheduled %d in 0.3 s at 2000/s", a)
	}
}
