package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
)

// runClosed is the closed loop: each worker sends its next operation (or
// pipeline of operations) as soon as the previous responses arrived. At
// the deadline the workers send nothing more; what they still wait for
// is outstanding at the window's end (the recorders count an outcome at
// or after the deadline so), and a worker still waiting DrainGrace after
// the deadline has its connection closed (reopened by the next window).
func (e *Engine) runClosed(ctx context.Context, w Window, start, deadline int64, recs []*recorder) {
	var next atomic.Uint64 // sequence numbers handed out
	limit := e.cfg.shareLimit(uint64(w.Requests))
	if w.Requests > 0 && limit == 0 {
		return // a share with none of the window's requests
	}
	inDo, cut := make([]atomic.Bool, len(recs)), make([]atomic.Bool, len(recs))
	var wg sync.WaitGroup
	for i := range recs {
		wg.Add(1)
		go func(wi int, rec *recorder) {
			defer wg.Done()
			p := e.cfg.Pipeline
			reqs := make([]driver.Request, p)
			out := make([]driver.Outcome, p)
			backoff := newBackoff()
			for ctx.Err() == nil {
				if deadline != 0 && driver.Now() >= deadline {
					return
				}
				n := p
				seq := next.Add(uint64(n)) - uint64(n)
				if limit != 0 {
					if seq >= limit {
						return
					}
					if rem := limit - seq; rem < uint64(n) {
						n = int(rem)
					}
				}
				for j := 0; j < n; j++ {
					reqs[j].Seq = e.cfg.seqOf(seq + uint64(j))
				}
				inDo[wi].Store(true)
				ok := e.exchange(ctx, wi, rec, reqs[:n], out[:n], backoff, nil, deadline)
				inDo[wi].Store(false)
				if cut[wi].Load() {
					e.causes[wi] = causeWindowEnd // drain closed it
				}
				if !ok {
					return
				}
			}
		}(i, recs[i])
	}
	e.drain(&wg, deadline, inDo, cut)
}

// DrainGrace is how long a window waits, after its deadline, for the
// goroutines of its connections (or its event loops) to come back with
// the requests they still had in flight (counted as outstanding at the
// window's end, whatever comes back): then the connections still waiting
// are closed, to be reopened by the next window. A window's figures thus
// end at its deadline, and Run returns within DrainGrace after it,
// whatever the per-request timeout.
const DrainGrace = driver.DrainGrace

// RateDrainGrace is DrainGrace (its older name).
const RateDrainGrace = DrainGrace

// drain waits for the workers of wg, at most DrainGrace past the
// deadline (0: without bound); then it closes the connections of the
// workers still in a Do (inDo), marking them cut, which makes them
// return, and waits.
func (e *Engine) drain(wg *sync.WaitGroup, deadline int64, inDo, cut []atomic.Bool) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if deadline == 0 {
		<-done
		return
	}
	t := time.NewTimer(time.Duration(deadline-driver.Now()) + DrainGrace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	for wi := range inDo {
		if inDo[wi].Load() {
			cut[wi].Store(true)
			e.abort(wi)
		}
	}
	<-done
}

// causeWindowEnd is why a connection closed by drain ended, counted when
// the next window reopens it.
const causeWindowEnd = driver.CauseWindowEnd
