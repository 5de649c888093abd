package evloop

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
)

// inKernel makes the test's Runs block in epoll_wait themselves
// (driver.SetBlockInKernel) with procs Go Ps (0: as they are).
func inKernel(t *testing.T, procs int) {
	t.Helper()
	t.Cleanup(driver.SetBlockInKernel(true))
	if procs > 0 {
		prev := runtime.GOMAXPROCS(procs)
		t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	}
}

// kernelPoller is pollerWithPair (the socket's events tagged 5, gen 2)
// with a Run begun that waits in the kernel, ended when the test ends.
func kernelPoller(t *testing.T, procs int) (*Poller, [2]int) {
	t.Helper()
	inKernel(t, procs)
	p, fds := pollerWithPair(t, 1, 5, 2)
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.End)
	if !p.kernel {
		t.Fatal("a Run begun with driver.BlockInKernel set does not wait in the kernel")
	}
	return p, fds
}

// A Run that waits in the kernel holding the only P still gives way to the
// process's other goroutines: a sleeping goroutine's timer fires and its
// write wakes the wait. (The monitor's preemption interrupts the wait; the
// next Wait yields.)
func TestKernelWaitGivesWayOnOneP(t *testing.T) {
	p, fds := kernelPoller(t, 1)
	go func() {
		time.Sleep(30 * time.Millisecond)
		_, _ = WriteNonblock(fds[0], []byte("x"))
	}()
	start, empty := time.Now(), 0
	for time.Since(start) < 10*time.Second {
		evs, err := p.Wait(-1)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			empty++
			continue
		}
		if len(evs) != 1 || evs[0].Fd != 5 || evs[0].Pad != 2 {
			t.Fatalf("Wait(-1) = %+v; want the socket's event (tag 5, gen 2)", evs)
		}
		p.End()
		if p.kernel {
			t.Error("End left the Poller waiting in the kernel")
		}
		t.Logf("woken by the other goroutine's write after %s and %d interrupted waits", time.Since(start).Round(time.Millisecond), empty)
		return
	}
	t.Fatal("the writing goroutine never ran while Wait held the only P")
}

// Waits with a limit time out as the runtime's park does.
func TestKernelWaitTimesOut(t *testing.T) {
	p, _ := kernelPoller(t, 0)
	start := time.Now()
	evs, err := p.Wait(30)
	if el := time.Since(start); err != nil || len(evs) != 0 || el > 5*time.Second {
		t.Fatalf("Wait(30) with nothing ready: %d events, %v after %s", len(evs), err, el)
	}
	if !p.yield {
		t.Error("a wait that timed out does not yield at the next")
	}
}

// The Loop's contract holds when its Runs wait in the kernel: with the Ps
// as they are, and with one P shared with the peers' goroutines (which then
// run only when the loop yields, so few requests).
func TestLoopInKernel(t *testing.T) {
	for _, procs := range []int{0, 1} {
		n := 1001
		if procs == 1 {
			n = 40
		}
		t.Run(map[int]string{0: "Ps as they are", 1: "one P"}[procs], func(t *testing.T) {
			inKernel(t, procs)
			l, _ := newLoop(t, 3, echo)
			for _, pipeline := range []int{1, 5} {
				w := newWork(n)
				run(t, l, pipeline, 0, w)
				if len(w.outs) != n || w.count(driver.OK) != n || len(w.causes) != 0 {
					t.Errorf("pipeline %d: %d outcomes, %d OK, reconnects %v", pipeline, len(w.outs), w.count(driver.OK), w.causes)
				}
			}
			if l.P.waits == 0 {
				t.Error("the Runs never waited in the kernel: the contract above was the park's")
			}

			// the window's end, with a connection that never answers
			l2, _ := newLoop(t, 2, silentFirst)
			w := newWork(1 << 40)
			run(t, l2, 2, driver.Now()+int64(windowLen), w)
			if w.count(driver.Outstanding) == 0 || w.count(driver.Timeout)+w.count(driver.Error) != 0 {
				t.Errorf("window end: %d Outstanding, %d timeouts, %d errors; want the silent connection's Outstanding and no failure",
					w.count(driver.Outstanding), w.count(driver.Timeout), w.count(driver.Error))
			}

			// a cancellation from another goroutine ends the Run
			l3, _ := newLoop(t, 2, silent)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w = newWork(1 << 40)
			go func() {
				<-w.claimed
				cancel()
			}()
			done := make(chan error, 1)
			go func() { done <- l3.Run(ctx, 4, 0, w) }()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Run after cancel: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("a cancelled Run waiting in the kernel did not return")
			}
		})
	}
}

// A wait in the kernel allocates nothing, its yields included (the
// drivers' allocation tests measure their loops parked: AllocsPerRun runs
// with one P, which a test's own server must share).
func TestKernelWaitNoAllocs(t *testing.T) {
	p, fds := kernelPoller(t, 0)
	one, buf := []byte("x"), make([]byte, 8)
	var bad error
	n := testing.AllocsPerRun(1000, func() {
		if _, err := WriteNonblock(fds[0], one); err != nil {
			bad = err
		}
		evs, err := p.Wait(-1)
		if err != nil || len(evs) != 1 {
			bad = errors.New("the wait did not return the socket's event")
		}
		if _, err := ReadNonblock(fds[1], buf); err != nil {
			bad = err
		}
	})
	if bad != nil {
		t.Fatal(bad)
	}
	if n != 0 {
		t.Errorf("%.2f allocations a wait in the kernel, want 0", n)
	}
	if p.waits < 1000 {
		t.Errorf("%d waits in the kernel counted, want at least 1000 (and a yield every 32nd)", p.waits)
	}
}
