package load

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/benchrig/benchrig/internal/driver"
)

// loopWork is the engine's side of one driver event loop (driver.Loop) in a
// closed-loop window: the same sequence and limit logic as runClosed, shared
// by all the loops through one atomic counter; one recorder per loop (each
// loop calls it from its own goroutine, so the recorder needs no lock); the
// progress counters.
type loopWork struct {
	claims *claimer
	rec    *recorder
	prog   *progress
}

var _ driver.LoopWork = (*loopWork)(nil)

// claimer hands out sequence numbers to several loops, never past the
// window's request count (limit 0: no count).
type claimer struct {
	next  atomic.Uint64
	limit uint64
}

// Claim implements driver.LoopWork: up to n sequence numbers.
func (w *loopWork) Claim(n int) (uint64, int) {
	c := w.claims
	for {
		seq := c.next.Load()
		k := uint64(n)
		if c.limit != 0 {
			if seq >= c.limit {
				return 0, 0
			}
			k = min(k, c.limit-seq)
		}
		if c.next.CompareAndSwap(seq, seq+k) {
			return seq, int(k)
		}
	}
}

// Record implements driver.LoopWork. In a closed loop latency runs from the
// send.
func (w *loopWork) Record(o *driver.Outcome, sent int64) {
	w.rec.record(o, sent, sent)
	w.count(o)
}

// count counts a recorded outcome as sent and in the progress counters.
func (w *loopWork) count(o *driver.Outcome) {
	if o.Class == driver.Drained {
		return // reported (and counted as sent) as Outstanding before
	}
	w.rec.sent++
	switch o.Class {
	case driver.OK:
		w.prog.requests.Add(1)
	case driver.Miss:
		w.prog.misses.Add(1)
	case driver.Outstanding:
	default:
		w.prog.failures.Add(1)
	}
}

// Reconnected implements driver.LoopWork.
func (w *loopWork) Reconnected(cause string, resent int) {
	w.rec.reconnected(cause)
	w.rec.resent += int64(resent)
}

// openLoops opens the connections on the driver's event loops, when the
// driver has them, for a closed loop, or for a constant rate when they pace
// (driver.PacedLoop). One loop runs on one OS
// thread, so the connections are spread over as many loops as the client may
// use cores (like wrk's -t), and never more loops than connections. It
// reports whether it did: not when the driver's OpenLoop says
// driver.ErrNoLoop for its configuration.
func (e *Engine) openLoops(ctx context.Context) (bool, error) {
	mx, ok := e.drv.(driver.Multiplexer)
	if !ok || (e.cfg.Rate == 0 && e.cfg.Share != nil) { // closed loops claim contiguous sequence numbers
		return false, nil
	}
	if pc, ok := e.drv.(driver.PaceChecker); ok && e.cfg.Rate > 0 && !pc.LoopsPace(ctx) {
		return false, nil
	}
	n := min(UsableCores(), e.cfg.Connections)
	if e.cfg.Loops > 0 {
		n = min(n, e.cfg.Loops)
	}
	opened := 0 // connections of the loops opened so far
	for i := 0; i < n; i++ {
		conns := e.cfg.Connections / n
		if i < e.cfg.Connections%n {
			conns++
		}
		l, err := mx.OpenLoop(ctx, conns)
		if err != nil {
			for _, l := range e.loops {
				_ = l.Close()
			}
			e.loops = nil
			if errors.Is(err, driver.ErrNoLoop) {
				return false, nil // the goroutine per connection drives it
			}
			// the driver numbers connections within the loop ("connection
			// 14 of 1000"): say which of all they are.
			return true, fmt.Errorf("open %d connections (event loop %d of %d, connections %d–%d): %w%s",
				e.cfg.Connections, i+1, n, opened+1, opened+conns, err, fdHint(err, e.cfg.Connections))
		}
		opened += conns
		e.loops = append(e.loops, l)
		if pl, ok := l.(driver.PacedLoop); e.cfg.Rate > 0 && (!ok || !pl.Paces()) {
			for _, l := range e.loops { // a constant rate needs loops that pace
				_ = l.Close()
			}
			e.loops = nil
			return false, nil
		}
	}
	return true, nil
}

// runLoops is the closed loop driven by the driver's event loops, one
// goroutine (and recorder) each.
func (e *Engine) runLoops(ctx context.Context, w Window, deadline int64, recs []*recorder) error {
	claims := &claimer{limit: uint64(w.Requests)}
	errs := make([]error, len(e.loops))
	var wg sync.WaitGroup
	for i, l := range e.loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = l.Run(ctx, e.cfg.Pipeline, deadline, &loopWork{claims: claims, rec: recs[i], prog: &e.prog})
		}()
	}
	wg.Wait()
	err := errors.Join(errs...)
	if err == nil || ctx.Err() != nil {
		return nil
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil // Close aborted the window, as it does the workers
	}
	return fmt.Errorf("event loop: %w", err)
}
