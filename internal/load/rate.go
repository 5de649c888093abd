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
	rate      float64
	arrival   string
	backlog   int
	scheduled int64
	late      int64
	dropped   int64
	// err is a pacer that could not be made (a rate Config.Validate
	// should have refused); finish returns it.
	err error
}

// RateDrainGrace is how long a constant-rate window waits, after its
// duration, for the requests still in flight: then their connections are
// closed and they are not counted. A window thus ends within duration +
// RateDrainGrace whatever the rate and whatever the per-request timeout
// (none included). The dispatcher itself stops at the deadline even when it
// has fallen behind the schedule: the requests it could not hand out in
// time count as scheduled and dropped.
const RateDrainGrace = 2 * time.Second

// dispatchSlack is how far behind its schedule the dispatcher may be at the
// deadline and still hand out the requests due before it.
const dispatchSlack = time.Millisecond

// runRate is the open loop: one dispatcher follows the pacer's absolute
// schedule and hands each due request to a free connection. A request that
// finds no free connection waits in order in a bounded backlog (and counts as
// late); when the backlog is full the send is dropped and counted, so the
// client never grows without bound on a slow target. Latency is measured
// from the due time (corrected) and from the actual send (service time).
func (e *Engine) runRate(ctx context.Context, w Window, start, deadline int64, recs []*recorder) *rateState {
	rs := &rateState{rate: e.cfg.Rate, arrival: e.cfg.Arrival, backlog: min(e.cfg.backlog(), MaxBacklog)}
	if rs.arrival == "" {
		rs.arrival = "constant"
	}
	var pacer Pacer
	var constant *ConstantPacer
	if rs.arrival == "poisson" {
		pacer, rs.err = NewPoissonPacer(e.cfg.Rate, e.cfg.Seed)
	} else {
		constant, rs.err = NewConstantPacer(e.cfg.Rate)
		pacer = constant
	}
	if rs.err != nil {
		return rs
	}
	q := newBacklog(rs.backlog)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var busy atomic.Int64 // workers holding a ticket
	inFlight := make([]atomic.Bool, len(recs))
	var wg sync.WaitGroup
	for i := range recs {
		wg.Add(1)
		go func(wi int, rec *recorder) {
			defer wg.Done()
			reqs := make([]driver.Request, 1)
			out := make([]driver.Outcome, 1)
			due := make([]int64, 1)
			b := newBackoff()
			for {
				t, ok := q.pop()
				if !ok {
					return
				}
				busy.Add(1)
				inFlight[wi].Store(true)
				reqs[0].Seq, due[0] = t.seq, t.due
				ok = e.exchange(wctx, wi, rec, reqs, out, b, due, 0)
				inFlight[wi].Store(false)
				busy.Add(-1)
				if !ok && wctx.Err() != nil {
					return
				}
			}
		}(i, recs[i])
	}

	limit := uint64(w.Requests)
	var seq uint64
	for ; limit == 0 || seq < limit; seq++ {
		d := pacer.Next()
		if w.Duration > 0 && d >= int64(w.Duration) {
			break
		}
		due := start + d
		if !sleepUntil(ctx, due) {
			break
		}
		if now := driver.Now(); deadline != 0 && now >= deadline && now-due > int64(dispatchSlack) {
			// Fallen behind: what was due before the deadline and not
			// handed out is dropped. (A wake-up a little late for a
			// request due before the deadline is not falling behind.)
			missed := rs.missed(constant, seq, d, w.Duration)
			rs.scheduled += missed
			rs.dropped += missed
			e.prog.failures.Add(missed)
			break
		}
		rs.scheduled++
		if int64(len(recs))-busy.Load()-int64(q.len()) <= 0 {
			rs.late++
		}
		if !q.push(ticket{seq: seq, due: due}) {
			rs.dropped++
			e.prog.failures.Add(1)
		}
	}
	q.close()
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	wait := RateDrainGrace
	if deadline != 0 {
		wait += max(0, time.Duration(deadline-driver.Now()))
	}
	grace := time.NewTimer(wait)
	select {
	case <-drained:
	case <-grace.C:
		// Abort what is still in flight: cancel, count what still waits
		// as dropped, then close the connections blocked in a read.
		cancel()
		if n := int64(q.drain()); n > 0 {
			rs.dropped += n
			e.prog.failures.Add(n)
		}
		for wi := range inFlight {
			if inFlight[wi].Load() {
				e.drop(wi)
			}
		}
	}
	grace.Stop()
	<-drained
	return rs
}

// missed counts the requests due from request seq (at offset d) up to the
// end of the window's duration, which a dispatcher that fell behind did not
// hand out: exact for a constant rate, the expected count for Poisson
// arrivals. Without a duration it is 0 (a count-bounded window ends by
// its count).
func (rs *rateState) missed(c *ConstantPacer, seq uint64, d int64, dur time.Duration) int64 {
	if dur <= 0 {
		return 0
	}
	if c != nil {
		n := c.CountBefore(int64(dur))
		if n <= seq {
			return 0
		}
		return int64(min(n-seq, math.MaxInt64))
	}
	return int64(math.Max(0, rs.rate*float64(int64(dur)-d)/1e9))
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

// MaxBacklog bounds the constant-rate backlog, whatever the rate or
// Config.MaxBacklog: 2²⁰ due requests (16 MiB of tickets). The default,
// rate × 1 s, reaches it only above about a million requests per second.
const MaxBacklog = 1 << 20

// backlog is the FIFO of due requests waiting for a free connection in a
// constant-rate window. It grows on demand (doubling) up to its cap and is
// never allocated up front: a rate of 10⁷ with a 1 s backlog would
// otherwise take 160 MB before the first request. Push never blocks: a full
// backlog refuses, and the dispatcher counts a drop.
type backlog struct {
	mu     sync.Mutex
	cond   sync.Cond
	buf    []ticket // ring buffer; len(buf) is its current capacity
	head   int
	n      int
	limit  int
	closed bool
}

// newBacklog returns an empty backlog that holds at most limit tickets.
func newBacklog(limit int) *backlog {
	b := &backlog{limit: max(limit, 1)}
	b.cond.L = &b.mu
	return b
}

// push appends t and wakes one waiting worker; false when the backlog is
// full (or closed).
func (b *backlog) push(t ticket) bool {
	b.mu.Lock()
	if b.n >= b.limit || b.closed {
		b.mu.Unlock()
		return false
	}
	if b.n == len(b.buf) {
		b.grow()
	}
	b.buf[(b.head+b.n)%len(b.buf)] = t
	b.n++
	b.mu.Unlock()
	b.cond.Signal()
	return true
}

// grow doubles the ring (from 64), not past the limit.
func (b *backlog) grow() {
	size := min(max(2*len(b.buf), 64), b.limit)
	nb := make([]ticket, size)
	for i := 0; i < b.n; i++ {
		nb[i] = b.buf[(b.head+i)%len(b.buf)]
	}
	b.buf, b.head = nb, 0
}

// pop waits for the oldest ticket; false once the backlog is closed and
// empty.
func (b *backlog) pop() (ticket, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.n == 0 && !b.closed {
		b.cond.Wait()
	}
	if b.n == 0 {
		return ticket{}, false
	}
	t := b.buf[b.head]
	b.head = (b.head + 1) % len(b.buf)
	b.n--
	return t, true
}

// len is the number of tickets waiting.
func (b *backlog) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// capacity is the size the ring has grown to (for tests).
func (b *backlog) capacity() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.buf)
}

// drain empties the backlog and returns how many tickets it held.
func (b *backlog) drain() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.n
	b.n, b.head = 0, 0
	return n
}

// close wakes every worker; those that find it empty stop.
func (b *backlog) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cond.Broadcast()
}
