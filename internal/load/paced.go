package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/benchrig/benchrig/internal/driver"
)

// pacedWork is the engine's side of one event loop in a constant-rate
// window (driver.PacedWork): the loop's share of the schedule (every L-th
// request of the engine's, L the loop count), its backlog of due requests
// waiting for a free connection, and the due time of each request in
// flight, keyed by its send time, so that latency runs from the due time
// (corrected for coordinated omission) and service time from the send.
type pacedWork struct {
	loopWork
	cfg    *Config
	pacer  Pacer
	share  Share  // the loop's share of the engine's requests
	start  int64  // the window's start
	dur    int64  // its duration (0: count-bound only)
	limit  uint64 // the loop's request count (0: none)
	j      uint64 // the loop's requests scheduled so far
	nextAt int64  // the next request's offset from start
	ended  bool   // the schedule has no more
	back   *overflow
	due    map[int64]int64 // send time → due time, of the requests in flight

	scheduled, late, dropped int64
}

var _ driver.PacedWork = (*pacedWork)(nil)

// newPacedWork makes loop i of n's work for window w: its own pacer over
// the engine's schedule (the engine's share of the cell, then the loop's
// of the engine's), a backlog of its share of the engine's.
func (e *Engine) newPacedWork(i, n int, w Window, start int64, rec *recorder, backlog int) (*pacedWork, error) {
	base, _, err := e.newPacer()
	if err != nil {
		return nil, err
	}
	sh := Share{Index: i, Count: n}
	pw := &pacedWork{
		loopWork: loopWork{rec: rec, prog: &e.prog},
		cfg:      &e.cfg, pacer: SharePacer(base, sh), share: sh, start: start, dur: int64(w.Duration),
		back: newOverflow(max(1, backlog/n)), due: make(map[int64]int64, 2*(e.cfg.Connections/n+1)),
	}
	if lim := e.cfg.shareLimit(uint64(w.Requests)); lim > 0 {
		pw.limit = uint64(sh.Requests(int64(min(lim, math.MaxInt64))))
		pw.ended = pw.limit == 0
	}
	if !pw.ended {
		pw.advance()
	}
	return pw, nil
}

// advance draws the next request's due time, or ends the schedule.
func (pw *pacedWork) advance() {
	if pw.limit != 0 && pw.j >= pw.limit {
		pw.ended = true
		return
	}
	pw.nextAt = pw.pacer.Next()
	if pw.dur > 0 && pw.nextAt >= pw.dur {
		pw.ended = true
	}
}

// Due implements driver.PacedWork.
func (pw *pacedWork) Due(now int64, free int) (int64, bool) {
	for !pw.ended && pw.start+pw.nextAt <= now {
		t := ticket{seq: pw.cfg.seqOf(pw.share.Seq(pw.j)), due: pw.start + pw.nextAt}
		pw.scheduled++
		if pw.back.n >= free {
			pw.late++ // no connection free when it was due
		}
		if !pw.back.push(t) {
			pw.dropped++
			pw.prog.failures.Add(1)
		}
		pw.j++
		pw.advance()
	}
	if pw.ended {
		return math.MaxInt64, pw.back.n > 0
	}
	return pw.wake(pw.start + pw.nextAt), true
}

// wake is when a loop should wake for a request due at due: then, or up
// to the timer slack later, so that one wake-up sends every request due
// by then (slackWake).
func (pw *pacedWork) wake(due int64) int64 {
	end := int64(0)
	if pw.dur > 0 {
		end = pw.start + pw.dur
	}
	return slackWake(due, pw.cfg.slack(), end)
}

// slackWake is when to wake for a request due at due with a timer slack
// of s: due+s, but in the last slack before the window's end (end; 0:
// none) no later than end−s and never before due, so that a wake-up a
// little late still sends what fell due before the end, where the window
// would drop it.
func slackWake(due, s, end int64) int64 {
	if s == 0 {
		return due
	}
	if end != 0 {
		return max(due, min(due+s, end-s))
	}
	return due + s
}

// Take implements driver.PacedWork.
func (pw *pacedWork) Take(now int64) (uint64, bool) {
	if pw.back.n == 0 {
		return 0, false
	}
	t := pw.back.front()
	pw.back.pop()
	_ = pw.rec.lag.RecordValue(us(now - t.due))
	pw.due[now] = t.due
	return t.seq, true
}

// Claim implements driver.LoopWork for a loop's failure paths (a reopen
// that failed, bytes nobody asked for): a request to fail in the
// connection's name, as a goroutine's failed reconnect fails the request
// it held. It is the oldest waiting, else the next of the schedule (drawn
// early: it counts as scheduled); k is 0 only when the schedule is over.
// A paced loop sends through Due and Take, never Claim.
func (pw *pacedWork) Claim(int) (uint64, int) {
	if pw.back.n > 0 {
		t := pw.back.front()
		pw.back.pop()
		return t.seq, 1
	}
	if pw.ended {
		return 0, 0
	}
	seq := pw.cfg.seqOf(pw.share.Seq(pw.j))
	pw.scheduled++
	pw.j++
	pw.advance()
	return seq, 1
}

// Record implements driver.LoopWork: latency from the request's due time.
func (pw *pacedWork) Record(o *driver.Outcome, sent int64) {
	from := sent
	if d, ok := pw.due[sent]; ok {
		from = d
		delete(pw.due, sent)
	}
	pw.rec.record(o, from, sent)
	pw.count(o)
}

// finish counts, at the window's end, the requests still waiting as
// dropped, and, unless the window was interrupted, those due before its
// end that the loop never moved to its backlog (it fell behind) as
// scheduled and dropped.
func (pw *pacedWork) finish(interrupted bool) {
	n := int64(pw.back.n)
	pw.back.n = 0
	var missed int64 // the one drawn and each after it, due before the end
	for !interrupted && !pw.ended && pw.dur > 0 && missed < maxMissedDraws {
		missed++
		pw.j++
		pw.advance()
	}
	pw.scheduled += missed
	n += missed
	pw.dropped += n
	if n > 0 {
		pw.prog.failures.Add(n)
	}
	clear(pw.due)
}

// runPacedLoops is the open loop driven by the driver's event loops (they
// pace: driver.PacedLoop), one goroutine, recorder and share of the
// schedule each: no dispatcher, no sleep per request.
func (e *Engine) runPacedLoops(ctx context.Context, w Window, start, deadline int64, recs []*recorder) (*rateState, error) {
	rs := e.newRateState()
	works := make([]*pacedWork, len(e.loops))
	for i := range e.loops {
		pw, err := e.newPacedWork(i, len(e.loops), w, start, recs[i], rs.backlog)
		if err != nil {
			rs.err = err
			return rs, nil
		}
		works[i] = pw
	}
	errs := make([]error, len(e.loops))
	var wg sync.WaitGroup
	for i, l := range e.loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = l.Run(ctx, e.cfg.Pipeline, deadline, works[i]) // streams per connection (driver.StreamPacer)
		}()
	}
	wg.Wait()
	for _, pw := range works {
		pw.finish(ctx.Err() != nil)
		rs.scheduled += pw.scheduled
		rs.late += pw.late
		rs.dropped += pw.dropped
	}
	err := errors.Join(errs...)
	if err == nil || ctx.Err() != nil {
		return rs, nil
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return rs, nil
	}
	return rs, fmt.Errorf("event loop: %w", err)
}
