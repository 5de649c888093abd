package evloop

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
)

// pacedWork is a driver.PacedWork of n requests due every gap from start,
// with an unbounded backlog; it keeps each take's time and due time.
type pacedWork struct {
	work
	t          *testing.T
	start, gap int64
	n, next    int    // requests, and the next to fall due
	back       []int  // due, waiting
	takes      []take // in order
	sendTimes  map[int64]bool
	lateTakes  int
}

type take struct {
	seq     int
	at, due int64
}

func (w *pacedWork) Claim(int) (uint64, int) {
	w.t.Error("Claim called on an open loop")
	return 0, 0
}

func (w *pacedWork) Due(now int64, free int) (int64, bool) {
	for w.next < w.n && w.start+int64(w.next)*w.gap <= now {
		w.back = append(w.back, w.next)
		w.next++
	}
	if w.next == w.n {
		return math.MaxInt64, len(w.back) > 0
	}
	return w.start + int64(w.next)*w.gap, true
}

func (w *pacedWork) Take(now int64) (uint64, bool) {
	if len(w.back) == 0 {
		return 0, false
	}
	seq := w.back[0]
	w.back = w.back[1:]
	due := w.start + int64(seq)*w.gap
	if w.sendTimes[now] {
		w.t.Errorf("request %d: send time %d given twice", seq, now)
	}
	w.sendTimes[now] = true
	w.takes = append(w.takes, take{seq, now, due})
	return uint64(seq), true
}

// TestPacedLoopSendsEachWhenDue: an open loop sends every request of the
// schedule once, never before it is due, each with a send time of its own,
// one in flight per connection, and never claims; its Run ends when the
// schedule is over and every answer is in.
func TestPacedLoopSendsEachWhenDue(t *testing.T) {
	l, p := newLoop(t, 3, echo)
	const n = 300
	w := &pacedWork{work: *newWork(0), t: t, start: driver.Now() + int64(time.Millisecond), gap: int64(200 * time.Microsecond), n: n, sendTimes: map[int64]bool{}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Run(ctx, 7, 0, w); err != nil { // the pipeline is 1 whatever is asked
		t.Fatal(err)
	}
	if len(w.takes) != n || len(w.outs) != n || w.count(driver.OK) != n {
		t.Fatalf("%d taken, %d recorded (%d OK), want %d each", len(w.takes), len(w.outs), w.count(driver.OK), n)
	}
	seen := make([]bool, n)
	for _, tk := range w.takes {
		if tk.at < tk.due {
			t.Errorf("request %d sent %d ns before it was due", tk.seq, tk.due-tk.at)
		}
		if seen[tk.seq] {
			t.Errorf("request %d taken twice", tk.seq)
		}
		seen[tk.seq] = true
	}
	// one request per send
	p.mu.Lock()
	sends := 0
	for _, k := range p.sends {
		sends += k
	}
	p.mu.Unlock()
	if sends != n {
		t.Errorf("%d batches sent, want %d (one request each)", sends, n)
	}
	if l.P.armed != math.MaxInt64 {
		t.Errorf("the timer is still armed after Run")
	}
}

// TestPacedLoopBacklogWaits: with every connection waiting on a silent
// peer, due requests wait in the work's backlog (no send beyond one per
// connection) and the window's deadline ends the Run, the requests in
// flight reported Outstanding.
func TestPacedLoopBacklogWaits(t *testing.T) {
	l, p := newLoop(t, 2, silent)
	start := driver.Now()
	w := &pacedWork{work: *newWork(0), t: t, start: start, gap: int64(time.Millisecond), n: 1000, sendTimes: map[int64]bool{}}
	deadline := start + int64(50*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Run(ctx, 1, deadline, w); err != nil {
		t.Fatal(err)
	}
	if len(w.takes) != 2 || w.count(driver.Outstanding) != 2 {
		t.Errorf("%d taken, %d outstanding; want 2 each (one per connection)", len(w.takes), w.count(driver.Outstanding))
	}
	// every request due before the deadline was moved to the backlog by
	// the end (counted there), none due after it
	if due := len(w.back) + len(w.takes); due != 50 {
		t.Errorf("%d requests moved due by the 50 ms deadline (every 1 ms from its start), want 50", due)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sends[0] != 1 || p.sends[1] != 1 {
		t.Errorf("sends by connection %v, want one each", p.sends)
	}
}
