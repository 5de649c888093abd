package evloop

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestCloseDuringWaitWakesAndClosesOnEnd(t *testing.T) {
	var p Poller
	closed := 0
	if err := p.Init(4, func() { closed++ }); err != nil {
		t.Fatal(err)
	}
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		evs, err := p.Wait(10_000)
		if err == nil && (len(evs) != 1 || evs[0].Fd != WakeTag) {
			err = errors.New("woken without the eventfd's event")
		}
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	p.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake Wait")
	}
	if !p.Cancelled() || closed != 0 {
		t.Fatalf("cancelled %v, closeConns called %d times before End", p.Cancelled(), closed)
	}
	p.End()
	p.Close()
	if closed != 1 {
		t.Errorf("closeConns called %d times, want once", closed)
	}
	if err := p.Begin(); !errors.Is(err, ErrClosed) {
		t.Errorf("Begin after Close: %v", err)
	}
}

func TestWriteNonblockReturnsTheRest(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	if rest, err := WriteNonblock(fds[0], []byte("hello")); err != nil || rest != nil {
		t.Fatalf("small write: rest %d bytes, %v", len(rest), err)
	}
	big := make([]byte, 64<<20) // more than any socket buffer
	rest, err := WriteNonblock(fds[0], big)
	if err != nil || len(rest) == 0 || len(rest) >= len(big) {
		t.Fatalf("big write: rest %d of %d bytes, %v", len(rest), len(big), err)
	}
	unix.Close(fds[1])
	if _, err := WriteNonblock(fds[0], rest); err == nil {
		t.Error("write to a closed peer: want an error")
	}
}

// TestWaitParksAndWakes: Wait times out with no events, returns a socket's
// event when data arrives while it is parked, and a later Wait without a
// limit is not cut short by the earlier deadline.
func TestWaitParksAndWakes(t *testing.T) {
	p, fds := pollerWithPair(t, 1, 7, 3)

	start := time.Now()
	evs, err := p.Wait(50)
	if el := time.Since(start); err != nil || len(evs) != 0 || el < 45*time.Millisecond || el > 5*time.Second {
		t.Fatalf("Wait(50) with nothing ready: %d events, %v after %s", len(evs), err, el)
	}
	if evs, err := p.Wait(0); err != nil || len(evs) != 0 {
		t.Fatalf("Wait(0) with nothing ready: %d events, %v", len(evs), err)
	}

	for round := 0; round < 3; round++ {
		time.AfterFunc(80*time.Millisecond, func() { _, _ = WriteNonblock(fds[0], []byte("x")) })
		start = time.Now()
		evs, err = p.Wait(-1)
		if err != nil || len(evs) != 1 || evs[0].Fd != 7 || evs[0].Pad != 3 {
			t.Fatalf("round %d: Wait(-1) = %+v, %v; want the socket's event (tag 7, gen 3)", round, evs, err)
		}
		if el := time.Since(start); el < 60*time.Millisecond {
			t.Errorf("round %d: woken after %s, before the write", round, el)
		}
		buf := make([]byte, 8)
		if n, err := ReadNonblock(fds[1], buf); n != 1 || err != nil {
			t.Fatalf("round %d: read %d bytes, %v", round, n, err)
		}
		if _, err := ReadNonblock(fds[1], buf); err != unix.EAGAIN {
			t.Fatalf("round %d: read of an empty socket: %v, want EAGAIN", round, err)
		}
	}
	unix.Shutdown(fds[0], unix.SHUT_WR) // the peer is done: EOF
	if n, err := ReadNonblock(fds[1], make([]byte, 8)); n != 0 || err != nil {
		t.Errorf("read after the peer closed: %d, %v; want 0, nil", n, err)
	}
}

// pollerWithPair makes a Poller and a non-blocking socket pair whose end
// watched is registered for EPOLLIN with tag and gen; all are closed when
// the test ends.
func pollerWithPair(t *testing.T, watched int, tag, gen int32) (*Poller, [2]int) {
	t.Helper()
	p := &Poller{}
	if err := p.Init(4, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	if err := p.Add(fds[watched], unix.EPOLLIN, tag, gen); err != nil {
		t.Fatal(err)
	}
	return p, [2]int{fds[0], fds[1]}
}
