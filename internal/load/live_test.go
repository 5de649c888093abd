package load

import (
	"context"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/result"
)

// The live reading of a window in flight: its counters and its last
// complete second, whose histogram buckets add up to the second's
// requests and which never exceeds what the results file records.
func TestProgressLastSecond(t *testing.T) {
	d := &fakeDriver{delay: time.Millisecond, failEach: 10}
	e, _ := run(t, Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1}}, d, Window{})
	if p := e.Progress(); p.Running || p.Second.T != -1 {
		t.Fatalf("before a window: %+v, want not running and no second", p)
	}
	type got struct {
		p   Progress
		res int64
	}
	done := make(chan *got, 1)
	go func() {
		res, err := e.Run(context.Background(), Window{Duration: 1500 * time.Millisecond})
		if err != nil {
			t.Error(err)
			done <- nil
			return
		}
		done <- &got{res: res.Timeline[0].Requests}
	}()
	var live Progress
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if p := e.Progress(); p.Running && p.Second.T == 0 && p.Second.Requests > 0 {
			live = p
			break
		}
	}
	g := <-done
	if g == nil {
		return
	}
	if live.Second.T != 0 {
		t.Fatalf("no live second 0 seen while the window ran: %+v", live)
	}
	s := live.Second
	var n int64
	for i := 1; i < len(s.Buckets); i += 2 {
		n += s.Buckets[i]
	}
	if n != s.Requests {
		t.Errorf("second 0's buckets count %d, its requests %d", n, s.Requests)
	}
	if s.P50US < 1000 || s.P99US < s.P50US {
		t.Errorf("second 0: p50 %d µs, p99 %d µs; each request takes at least 1 ms", s.P50US, s.P99US)
	}
	if s.Errors == 0 {
		t.Errorf("second 0: no errors counted; every 10th request is a 500")
	}
	if s.Requests > g.res {
		t.Errorf("live second 0 has %d requests, the window's timeline %d", s.Requests, g.res)
	}
	if live.Requests < s.Requests || live.Failures < s.Errors {
		t.Errorf("running counts %d OK, %d failed below second 0's %d, %d", live.Requests, live.Failures, s.Requests, s.Errors)
	}
}
