package evloop

import (
	"context"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
)

// With a busy poll set, a Wait polls until the events come and counts the
// time it spent (BusyPolled, at End), without sleeping in between; with
// nothing ready it gives up after the busy poll and sleeps as before.
func TestBusyPollWaitsAwakeAndCounts(t *testing.T) {
	defer driver.SetBusyPoll(500 * time.Microsecond)()
	p, fds := pollerWithPair(t, 1, 7, 3)
	before := driver.BusyPolled()
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	if p.spin != int64(500*time.Microsecond) {
		t.Fatalf("Begin took a busy poll of %d ns, want 500µs", p.spin)
	}

	// nothing ready: at least the busy poll, then the sleep to the timeout
	start := time.Now()
	evs, err := p.Wait(20)
	if el := time.Since(start); err != nil || len(evs) != 0 || el < 20*time.Millisecond {
		t.Fatalf("Wait(20) with nothing ready: %d events, %v after %s", len(evs), err, el)
	}
	if p.spun < int64(500*time.Microsecond) {
		t.Errorf("gave up polling after %s, before the busy poll of 500µs", time.Duration(p.spun))
	}

	// ready before the wait: the first poll finds it
	if _, err := WriteNonblock(fds[0], []byte("x")); err != nil {
		t.Fatal(err)
	}
	spun := p.spun
	evs, err = p.Wait(-1)
	if err != nil || len(evs) != 1 || evs[0].Fd != 7 || evs[0].Pad != 3 {
		t.Fatalf("Wait(-1) with the socket readable = %+v, %v", evs, err)
	}
	if p.spun <= spun {
		t.Error("a wait answered by the busy poll added no polling time")
	}
	total := p.spun
	p.End()
	if got := driver.BusyPolled() - before; got != time.Duration(total) {
		t.Errorf("BusyPolled grew by %s over the Run, want the %s it polled", got, time.Duration(total))
	}
	if p.spin != 0 || p.spun != 0 {
		t.Errorf("after End: busy poll %d ns, polled %d ns; want both reset", p.spin, p.spun)
	}
}

// An open loop (a PacedWork) never busy-polls: its waits are for a send's
// due time.
func TestPacedLoopDoesNotBusyPoll(t *testing.T) {
	defer driver.SetBusyPoll(time.Millisecond)()
	l, _ := newLoop(t, 2, echo)
	const n = 50
	w := &pacedWork{work: *newWork(0), t: t, start: driver.Now() + int64(time.Millisecond), gap: int64(2 * time.Millisecond), n: n, sendTimes: map[int64]bool{}}
	before := driver.BusyPolled()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Run(ctx, 1, 0, w); err != nil {
		t.Fatal(err)
	}
	if w.count(driver.OK) != n {
		t.Fatalf("%d OK, want %d", w.count(driver.OK), n)
	}
	if got := driver.BusyPolled() - before; got != 0 {
		t.Errorf("an open loop busy-polled %s", got)
	}
}

// A closed loop with a busy poll answers every request as before.
func TestClosedLoopBusyPolls(t *testing.T) {
	defer driver.SetBusyPoll(50 * time.Microsecond)()
	l, _ := newLoop(t, 3, echo)
	before := driver.BusyPolled()
	w := newWork(2000)
	run(t, l, 1, 0, w)
	if len(w.outs) != 2000 || w.count(driver.OK) != 2000 {
		t.Errorf("%d outcomes, %d OK; want 2000 each", len(w.outs), w.count(driver.OK))
	}
	if driver.BusyPolled() == before {
		t.Error("a closed loop with a busy poll of 50µs polled no time")
	}
}

func TestSetBusyPollBoundsAndRestores(t *testing.T) {
	restore := driver.SetBusyPoll(time.Hour)
	if got := driver.BusyPoll(); got != driver.MaxBusyPoll {
		t.Errorf("SetBusyPoll(1h) gave %s, want the bound %s", got, driver.MaxBusyPoll)
	}
	inner := driver.SetBusyPoll(-time.Second)
	if got := driver.BusyPoll(); got != 0 {
		t.Errorf("SetBusyPoll(-1s) gave %s, want 0", got)
	}
	inner()
	restore()
	if got := driver.BusyPoll(); got != 0 {
		t.Errorf("after restore: %s, want 0", got)
	}
}
