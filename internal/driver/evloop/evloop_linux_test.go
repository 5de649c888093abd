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
