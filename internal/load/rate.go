package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/result"
)

// ticket is one due request handed from the dispatcher to a free worker.
type ticket struct {
	seq uint64
	due int64 // driver.Now() time the request is due
}

// rateState counts what the dispatcher did in a constant-rate window.
type rateState struct {
	rate      float64
	arrival   string
	backlog   int
	scheduled int64
	late      int64
	dropped   int64
}

// runRate is the open loop: one dispatcher follows the pacer's absolute
// schedule and hands each due request to a free connection. A request that
// finds no free connection waits in order in a bounded backlog (and counts as
// late); when the backlog is full the send is dropped and counted, so the
// client never grows without bound on a slow target. Latency is measured
// from the due time (corrected) and from the actual send (service time).
func (e *Engine) runRate(ctx context.Context, w Window, start, deadline int64, recs []*recorder) *rateState {
	rs := &rateState{rate: e.cfg.Rate, arrival: e.cfg.Arrival, backlog: e.cfg.backlog()}
	if rs.arrival == "" {
		rs.arrival = "constant"
	}
	var pacer Pacer
	if rs.arrival == "poisson" {
		pacer, _ = NewPoissonPacer(e.cfg.Rate, e.cfg.Seed)
	} else {
		pacer, _ = NewConstantPacer(e.cfg.Rate)
	}
	ch := make(chan ticket, rs.backlog)
	var busy atomic.Int64 // workers holding a ticket
	var wg sync.WaitGroup
	for i := range recs {
		wg.Add(1)
		go func(wi int, rec *recorder) {
			defer wg.Done()
			reqs := make([]driver.Request, 1)
			out := make([]driver.Outcome, 1)
			due := make([]int64, 1)
			b := newBackoff()
			for t := range ch {
				busy.Add(1)
				reqs[0].Seq, due[0] = t.seq, t.due
				ok := e.exchange(ctx, wi, rec, reqs, out, b, due, 0)
				busy.Add(-1)
				if !ok && ctx.Err() != nil {
					return
				}
			}
		}(i, recs[i])
	}

	limit := uint64(w.Requests)
dispatch:
	for seq := uint64(0); ; seq++ {
		if limit != 0 && seq >= limit {
			break
		}
		d := pacer.Next()
		if w.Duration > 0 && d >= int64(w.Duration) {
			break
		}
		due := start + d
		if !sleepUntil(ctx, due) {
			break dispatch
		}
		rs.scheduled++
		if int64(len(recs))-busy.Load()-int64(len(ch)) <= 0 {
			rs.late++
		}
		select {
		case ch <- ticket{seq: seq, due: due}:
		default:
			rs.dropped++
			e.prog.failures.Add(1)
		}
	}
	close(ch)
	wg.Wait()
	return rs
}

// sleepUntil blocks the dispatcher until due (a driver.Now() time) with
// clock_nanosleep, checking ctx at least every 50 ms; it reports false when
// ctx ended. Go's timers wake up to a millisecond late when the runtime
// parks in the network poller (its epoll timeout has millisecond
// resolution): measured here, a schedule lag of 0.5 ms at the median. A
// blocking nanosleep on the dispatcher's thread wakes within tens of
// microseconds, and that lag is part of every corrected latency.
func sleepUntil(ctx context.Context, due int64) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		wait := due - driver.Now()
		if wait <= 0 {
			return true
		}
		if wait > int64(50*time.Millisecond) {
			wait = int64(50 * time.Millisecond)
		}
		ts := unix.NsecToTimespec(wait)
		_ = unix.ClockNanosleep(unix.CLOCK_MONOTONIC, 0, &ts, nil)
	}
}

// finish fills the open-loop figures of the result.
func (rs *rateState) finish(res *result.Load, w Window) error {
	r := res.Rate
	r.Target = rs.rate
	r.Arrival = rs.arrival
	r.Scheduled = rs.scheduled
	r.Late = rs.late
	r.Dropped = rs.dropped
	r.MaxBacklog = rs.backlog
	// The planned load seconds: the window's duration, or the time the
	// schedule needs for its request count; an interrupted window counts
	// what elapsed.
	planned := w.Duration.Seconds()
	if planned == 0 {
		planned = float64(w.Requests) / rs.rate
	}
	if res.Interrupted && res.Seconds < planned {
		planned = res.Seconds
	}
	if res.Seconds > 0 {
		r.Achieved = float64(res.Requests) / res.Seconds
	}
	if planned > 0 {
		r.Coverage = float64(res.Requests) / (rs.rate * planned) * 100
	}
	return nil
}
