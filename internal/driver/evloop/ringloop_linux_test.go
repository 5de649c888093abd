package evloop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
)

// onRing makes the test's Runs of a Feeder's loop go on io_uring (they
// must block in the kernel and not busy-poll) and checks, at the end, that
// some did. A machine that refuses io_uring skips the test (RingCheck).
func onRing(t *testing.T) {
	t.Helper()
	ringCheck(t)
	inKernel(t, 0)
	t.Cleanup(driver.SetIOUring(true))
	t.Cleanup(driver.SetBusyPoll(0))
	before := driver.RingRuns()
	t.Cleanup(func() {
		if err := RingRefused(); err != nil {
			t.Errorf("io_uring refused during the test: %v", err)
			return
		}
		if driver.RingRuns() == before {
			t.Error("no Run went on io_uring")
		}
	})
}

// The loop's contract holds on the ring as on epoll: every claimed request
// recorded once, over pipelines; the window's end; a timeout's reopen
// (which puts the new socket on the ring); a cancellation; and the
// connections back on epoll between Runs.
func TestRingLoop(t *testing.T) {
	onRing(t)
	t.Run("every claimed request", func(t *testing.T) {
		l, p := newLoopOf(t, 3, echo, true)
		for _, pipeline := range []int{0, 1, 5, 64} {
			w := newWork(1001)
			run(t, l, pipeline, 0, w)
			if len(w.outs) != 1001 || w.count(driver.OK) != 1001 || len(w.causes) != 0 {
				t.Errorf("pipeline %d: %d outcomes, %d OK, reconnects %v", pipeline, len(w.outs), w.count(driver.OK), w.causes)
			}
		}
		for i := range l.Conns {
			if p.sends[i] == 0 {
				t.Errorf("connection %d sent nothing", i)
			}
		}
		// between Runs the sockets are back in the epoll set: a Run on
		// epoll finds them
		restore := driver.SetIOUring(false)
		w := newWork(100)
		run(t, l, 2, 0, w)
		restore()
		if w.count(driver.OK) != 100 {
			t.Errorf("an epoll Run after ring Runs: %d OK of 100", w.count(driver.OK))
		}
	})
	t.Run("window end", func(t *testing.T) {
		l, _ := newLoopOf(t, 1, silentFirst, true)
		w := newWork(1 << 40)
		run(t, l, 2, driver.Now()+int64(windowLen), w)
		c := l.Conns[0]
		if w.count(driver.Outstanding) != 2 || len(w.outs) != 2 {
			t.Fatalf("outcomes %+v", w.outs)
		}
		if c.St != Down || !c.Reopen || c.Cause != driver.CauseWindowEnd {
			t.Fatalf("connection after the window: %+v", *c)
		}
		w = newWork(10)
		run(t, l, 2, 0, w)
		if w.count(driver.OK) != 10 || len(w.causes) != 1 || w.causes[0] != driver.CauseWindowEnd {
			t.Errorf("next Run: %d OK, reconnects %v", w.count(driver.OK), w.causes)
		}
	})
	t.Run("timeout reopens on the ring", func(t *testing.T) {
		l, _ := newLoopOf(t, 1, silentFirst, true)
		l.Timeout = int64(50 * time.Millisecond)
		w := newWork(10)
		w.onRecord = func(o *driver.Outcome) {
			if o.Class == driver.Timeout {
				l.Timeout = 0
			}
		}
		run(t, l, 1, 0, w)
		if w.count(driver.Timeout) != 1 || w.count(driver.OK) != 9 || len(w.causes) != 1 {
			t.Errorf("outcomes %+v, reconnects %v", w.outs, w.causes)
		}
	})
	t.Run("peer closes", func(t *testing.T) {
		// the first socket answers 3 requests and closes: its batch in
		// flight fails, and the reopened socket answers the rest
		l, _ := newLoopOf(t, 1, func(n int, peer *os.File) {
			if n > 0 {
				echo(n, peer)
				return
			}
			b := make([]byte, 1)
			for range 3 {
				if _, err := peer.Read(b); err != nil {
					return
				}
				_, _ = peer.Write([]byte("a"))
			}
			_, _ = peer.Read(b)
		}, true)
		w := newWork(20)
		run(t, l, 1, 0, w)
		if w.count(driver.OK) != 19 || w.count(driver.Error) != 1 || len(w.causes) != 1 {
			t.Errorf("outcomes %+v, reconnects %v", w.outs, w.causes)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		l, _ := newLoopOf(t, 2, silent, true)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w := newWork(1 << 40)
		go func() {
			<-w.claimed
			cancel()
		}()
		done := make(chan error, 1)
		go func() { done <- l.Run(ctx, 4, 0, w) }()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run after cancel: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a cancelled Run on the ring did not return")
		}
		for _, c := range l.Conns {
			if c.St != Down || c.Fd != -1 {
				t.Errorf("connection %d after cancel: %+v", c.I, *c)
			}
		}
	})
}

// With two buffers of 8 bytes, answers overflow the ring's buffers: the
// multishot recv ends (ENOBUFS) and is armed again, and no answer is lost
// or counted twice.
func TestRingLoopRunsOutOfBuffers(t *testing.T) {
	onRing(t)
	n, size := ringBufs, ringBufSize
	ringBufs, ringBufSize = 2, 8
	t.Cleanup(func() { ringBufs, ringBufSize = n, size })
	l, _ := newLoopOf(t, 4, echo, true)
	for _, pipeline := range []int{1, 64} {
		w := newWork(5000)
		run(t, l, pipeline, 0, w)
		if w.count(driver.OK) != 5000 || len(w.outs) != 5000 {
			t.Errorf("pipeline %d: %d outcomes, %d OK", pipeline, len(w.outs), w.count(driver.OK))
		}
	}
}

// A socket closed while its requests are on the ring is closed for the
// peer at once (CloseSocket cancels them): the peer reads the end of the
// stream, not a socket held open by the ring.
func TestRingCloseSocketEndsIt(t *testing.T) {
	inKernel(t, 0)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	ringCheck(t)
	r, err := newRing(64, make([]byte, 4*64), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	if err := r.recv(fds[0], ringData(kindRecv, 0, 1)); err != nil {
		t.Fatal(err)
	}
	if err := r.enter(0, 0, true); err != nil {
		t.Fatal(err)
	}
	p := Poller{ring: r}
	p.CloseSocket(fds[0])
	if err := unix.SetNonblock(fds[1], true); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := unix.Read(fds[1], b)
		if err == nil && n == 0 {
			break // the end of the stream
		}
		if err != unix.EAGAIN || time.Now().After(deadline) {
			t.Fatalf("the peer of a socket closed on the ring: read %d, %v; want the end of the stream", n, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// ringCheck skips the test where the machine refuses io_uring, and fails
// it on any other error making a ring (RingCheck).
func ringCheck(t *testing.T) {
	t.Helper()
	why, err := RingCheck()
	if err != nil {
		t.Fatal(err)
	}
	if why != "" {
		t.Skip(why)
	}
}

// The machine's refusals skip the ring's tests; anything else fails them.
func TestKernelRefusesRing(t *testing.T) {
	for errno, want := range map[unix.Errno]bool{unix.ENOSYS: true, unix.EPERM: true, unix.EACCES: true, unix.EINVAL: false, unix.ENOMEM: false} {
		err := fmt.Errorf("%w: io_uring_setup: %w", errNoRing, errno)
		if got := KernelRefusesRing(err); got != want {
			t.Errorf("KernelRefusesRing(%v) = %v, want %v", err, got, want)
		}
	}
}
