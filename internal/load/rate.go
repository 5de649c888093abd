package load

import (
	"context"
	"math"
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
	rate      float64 // this engine's part of the rate (the whole without a share)
	full      float64 // the whole schedule's rate
	arrival   string
	backlog   int
	scheduled int64
	late      int64
	dropped   int64
	// err is a pacer that could not be made (a rate Config.Validate
	// should have refused); finish returns it.
	err error
}

// A constant-rate window ends at its deadline, whatever the rate: a
// schedule whose last request is due well before it (a rate below one per
// second) still waits for it. Requests in flight at the deadline are
// outstanding at the window's end; the workers get DrainGrace to come back
// with them, then their connections are closed. A request still waiting
// for a free connection at the deadline is never sent: scheduled and
// dropped. The dispatcher itself stops at the deadline even when it has
// fallen behind the schedule: the requests it could not hand out in time
// count as scheduled and dropped.

// dispatchSlack is how far behind its schedule the dispatcher may be at the
// deadline and still hand out the requests due before it: more is a
// dispatcher that cannot keep up, less may be a noisy machine's hiccup.
const dispatchSlack = 50 * time.Millisecond

// handoffCap is the capacity of the channel that hands due requests to the
// workers: the fast path, allocated with the window (16 KiB of tickets).
// Requests beyond it wait in the dispatcher's own overflow queue, which
// grows on demand up to the backlog's cap.
const handoffCap = 1024

// overflowPoll is how often a dispatcher holding overflow tickets moves
// them to the handoff channel while it waits for the next due time.
const overflowPoll = 200 * time.Microsecond

// runRate is the open loop: one dispatcher follows the pacer's absolute
// schedule and hands each due request to a free connection. A request that
// finds no free connection waits in order in a bounded backlog (and counts as
// late); when the backlog is full the send is dropped and counted, so the
// client never grows without bound on a slow target. Latency is measured
// from the due time (corrected) and from the actual send (service time).
//
// The backlog is a channel of at most handoffCap tickets read by the
// workers, then an overflow ring only the dispatcher touches, grown on
// demand: nothing of rate × 1 s is allocated up front.
func (e *Engine) runRate(ctx context.Context, w Window, start, deadline int64, recs []*recorder) *rateState {
	rs := e.newRateState()
	var pacer Pacer
	var constant *ConstantPacer
	if pacer, constant, rs.err = e.newPacer(); rs.err != nil {
		return rs
	}
	ch := make(chan ticket, min(rs.backlog, handoffCap))
	over := newOverflow(rs.backlog - cap(ch))
	refill := func() {
		for over.n > 0 {
			select {
			case ch <- over.front():
				over.pop()
			default:
				return
			}
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var busy atomic.Int64    // workers holding a ticket
	var tooLate atomic.Int64 // tickets a worker got at or after the deadline
	inFlight, cut := make([]atomic.Bool, len(recs)), make([]atomic.Bool, len(recs))
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
				// The window is over: a request taken up past its end, and
				// more than the dispatcher's slack after it was due, is
				// never sent (dropped); one due just before the end goes
				// out, outstanding at the end.
				if now := driver.Now(); deadline != 0 && now >= deadline && now-t.due > int64(dispatchSlack) {
					tooLate.Add(1)
					continue
				}
				busy.Add(1)
				inFlight[wi].Store(true)
				reqs[0].Seq, due[0] = t.seq, t.due
				ok := e.exchange(wctx, wi, rec, reqs, out, b, due, 0)
				inFlight[wi].Store(false)
				busy.Add(-1)
				if cut[wi].Load() {
					e.causes[wi] = causeWindowEnd // the drain closed it
				}
				if !ok && wctx.Err() != nil {
					return
				}
			}
		}(i, recs[i])
	}
	defer func() {
		if n := tooLate.Load(); n > 0 {
			rs.dropped += n
			e.prog.failures.Add(n)
		}
	}()

	limit := e.cfg.shareLimit(uint64(w.Requests))
	none := w.Requests > 0 && limit == 0 // a share with none of the window's requests
	scheduleEnded := false               // the next request is due after the window
	woke := int64(math.MinInt64)         // when the dispatcher last woke (timer slack)
	for j := uint64(0); !none && (limit == 0 || j < limit); j++ {
		seq := e.cfg.seqOf(j)
		d := pacer.Next()
		if w.Duration > 0 && d >= int64(w.Duration) {
			scheduleEnded = true
			break
		}
		due := start + d
		wake := due
		if due > woke {
			// the first request due after the last wake-up: up to the
			// timer slack later, so one wake-up hands out all due by then
			wake = slackWake(due, e.cfg.slack(), deadline)
			woke = wake
		}
		if !sleepUntil(ctx, wake, over, refill) {
			break
		}
		if now := driver.Now(); deadline != 0 && now >= deadline && now-due > int64(dispatchSlack) {
			// Fallen behind: what was due before the deadline and not
			// handed out is dropped. (Up to dispatchSlack late for a
			// request due before the deadline is not falling behind.)
			missed := rs.missed(&e.cfg, constant, pacer, seq, d, w.Duration)
			rs.scheduled += missed
			rs.dropped += missed
			e.prog.failures.Add(missed)
			break
		}
		rs.scheduled++
		refill()
		if int64(len(recs))-busy.Load()-int64(len(ch)+over.n) <= 0 {
			rs.late++
		}
		t := ticket{seq: seq, due: due}
		if over.n == 0 {
			select {
			case ch <- t:
				continue
			default:
			}
		}
		if !over.push(t) {
			rs.dropped++
			e.prog.failures.Add(1)
		}
	}

	if scheduleEnded && deadline != 0 {
		// The window lasts its duration, also when its last request was
		// due well before the end (rates below one per second).
		sleepUntil(ctx, deadline, over, refill)
	}
	// Hand out what still waits, then let the workers finish, within the
	// window's end + DrainGrace.
	wait := DrainGrace
	if deadline != 0 {
		wait += max(0, time.Duration(deadline-driver.Now()))
	}
	grace := time.NewTimer(wait)
	defer grace.Stop()
	expired := false
	for over.n > 0 && !expired {
		select {
		case ch <- over.front():
			over.pop()
		case <-grace.C:
			expired = true
		case <-ctx.Done():
			expired = true
		}
	}
	close(ch)
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	if !expired {
		select {
		case <-drained:
			return rs
		case <-grace.C:
		}
	}
	// Abort what is still in flight: cancel, count what still waits as
	// dropped, then close the connections blocked in a read.
	cancel()
	n := int64(over.n)
	for range ch {
		n++
	}
	if n > 0 {
		rs.dropped += n
		e.prog.failures.Add(n)
	}
	for wi := range inFlight {
		if inFlight[wi].Load() {
			cut[wi].Store(true)
			e.abort(wi)
		}
	}
	<-drained
	return rs
}

// missed counts the requests due from request seq (at offset d) up to the
// end of the window's duration, which a dispatcher that fell behind did not
// hand out: exact for a constant rate (counted), and for Poisson arrivals
// (the seeded pacer's remaining due times drawn, so the same seed schedules
// the same count however late the dispatcher fell; past maxMissedDraws the
// expected count). Without a duration it is 0 (a count-bounded window ends
// by its count).
func (rs *rateState) missed(cfg *Config, c *ConstantPacer, p Pacer, seq uint64, d int64, dur time.Duration) int64 {
	if dur <= 0 {
		return 0
	}
	if c != nil {
		n := c.CountBefore(int64(dur))
		if n <= seq {
			return 0
		}
		return int64(min(cfg.ownedBefore(seq, n), math.MaxInt64))
	}
	if expected := rs.rate * float64(int64(dur)-d) / 1e9; expected > maxMissedDraws {
		return int64(expected)
	}
	n := int64(1) // the one due at d
	for p.Next() < int64(dur) {
		n++
	}
	return n
}

// maxMissedDraws bounds the due times missed draws from a Poisson pacer.
const maxMissedDraws = 1 << 22

// sleepUntil blocks the dispatcher until due (a driver.Now() time) with
// clock_nanosleep, checking ctx at least every 50 ms (every overflowPoll,
// calling refill, while over holds tickets); it reports false when ctx
// ended. Go's timers wake up to a millisecond late when the runtime parks in
// the network poller (its epoll timeout has millisecond resolution):
// measured here, a schedule lag of 0.5 ms at the median. A blocking
// nanosleep on the dispatcher's thread wakes within tens of microseconds,
// and that lag is part of every corrected latency.
func sleepUntil(ctx context.Context, due int64, over *overflow, refill func()) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		wait := due - driver.Now()
		if wait <= 0 {
			return true
		}
		chunk := int64(50 * time.Millisecond)
		if over.n > 0 {
			refill()
			chunk = int64(overflowPoll)
		}
		ts := unix.NsecToTimespec(min(wait, chunk))
		_ = unix.ClockNanosleep(unix.CLOCK_MONOTONIC, 0, &ts, nil)
	}
}

// newRateState is a constant-rate window's counts, before any request.
func (e *Engine) newRateState() *rateState {
	rs := &rateState{rate: e.cfg.Rate, full: e.cfg.Rate, arrival: e.cfg.Arrival, backlog: min(e.cfg.backlog(), MaxBacklog)}
	if e.cfg.Share != nil {
		rs.rate = e.cfg.Share.Rate(e.cfg.Rate)
	}
	if rs.arrival == "" {
		rs.arrival = "constant"
	}
	return rs
}

// newPacer is the engine's schedule: constant or Poisson at the cell's
// rate, this engine's share of it when it has one; constant is the
// constant pacer underneath (nil for Poisson).
func (e *Engine) newPacer() (p Pacer, constant *ConstantPacer, err error) {
	if e.cfg.Arrival == "poisson" {
		p, err = NewPoissonPacer(e.cfg.Rate, e.cfg.Seed)
	} else {
		constant, err = NewConstantPacer(e.cfg.Rate)
		p = constant
	}
	if err != nil {
		return nil, nil, err
	}
	if e.cfg.Share != nil {
		p = SharePacer(p, *e.cfg.Share)
	}
	return p, constant, nil
}

// finish fills the open-loop figures of the result.
func (rs *rateState) finish(res *result.Load, w Window) error {
	if rs.err != nil {
		return rs.err
	}
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
		planned = float64(w.Requests) / rs.full
	}
	if res.Interrupted && res.Seconds < planned {
		planned = res.Seconds
	}
	if res.Seconds > 0 {
		r.Achieved = float64(res.Requests) / res.Seconds
	}
	switch {
	case rs.arrival != "poisson" && r.Scheduled > 0:
		// A constant schedule's requests are counted, not estimated:
		// rate × seconds is not a whole number of requests (0.5/s for
		// 3 s schedules 2, at 0 s and 2 s).
		r.Coverage = float64(res.Requests) / float64(r.Scheduled) * 100
	case planned > 0:
		r.Coverage = float64(res.Requests) / (rs.rate * planned) * 100
	}
	return nil
}

// MaxBacklog bounds the constant-rate backlog, whatever the rate or
// Config.MaxBacklog: 2²⁰ due requests (16 MiB of tickets). The default,
// rate × 1 s, reaches it only above about a million requests per second.
const MaxBacklog = 1 << 20

// overflow is the part of the backlog beyond the handoff channel: a FIFO
// ring only the dispatcher touches (no lock), grown on demand (doubling
// from 64) up to its limit and never allocated up front.
type overflow struct {
	buf   []ticket // len(buf) is the current capacity
	head  int
	n     int
	limit int
}

// newOverflow returns an empty overflow holding at most limit tickets
// (none when limit ≤ 0).
func newOverflow(limit int) *overflow { return &overflow{limit: max(limit, 0)} }

// push appends t; false when the overflow is full.
func (o *overflow) push(t ticket) bool {
	if o.n >= o.limit {
		return false
	}
	if o.n == len(o.buf) {
		nb := make([]ticket, min(max(2*len(o.buf), 64), o.limit))
		for i := 0; i < o.n; i++ {
			nb[i] = o.buf[(o.head+i)%len(o.buf)]
		}
		o.buf, o.head = nb, 0
	}
	o.buf[(o.head+o.n)%len(o.buf)] = t
	o.n++
	return true
}

// front is the oldest ticket; the overflow must not be empty.
func (o *overflow) front() ticket { return o.buf[o.head] }

// pop removes the oldest ticket.
func (o *overflow) pop() {
	o.head = (o.head + 1) % len(o.buf)
	o.n--
}
