package evloop

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestAlarm(t *testing.T) {
	var a Alarm
	if !a.Due(0) {
		t.Error("the zero alarm is not due")
	}
	a.Clear()
	if a.Due(1e18) || a.WaitMS(0) != -1 {
		t.Errorf("a cleared alarm: due %v, wait %d ms", a.Due(1e18), a.WaitMS(0))
	}
	a.Set(5_000_000)
	a.Set(9_000_000) // later: ignored
	if a.Due(4_999_999) || !a.Due(5_000_000) {
		t.Error("due at the wrong time")
	}
	if got := a.WaitMS(3_500_000); got != 2 {
		t.Errorf("wait from 3.5 ms to 5 ms = %d ms, want 2 (rounded up)", got)
	}
	if got := a.WaitMS(6_000_000); got != 0 {
		t.Errorf("wait past due = %d ms, want 0", got)
	}
}

// TestFlushArmsEPOLLOUT: a write the socket buffer cannot take arms
// EPOLLOUT; once the peer reads and the rest is flushed, it is disarmed.
func TestFlushArmsEPOLLOUT(t *testing.T) {
	p, fds := pollerWithPair(t, 0, 1, 1)
	out := Outbox{Pending: make([]byte, 8<<20)}
	if err := p.Flush(fds[0], 1, 1, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Pending) == 0 || !out.armed {
		t.Fatalf("8 MiB into a socket pair: %d bytes left, armed %v; want a rest and EPOLLOUT armed", len(out.Pending), out.armed)
	}
	buf := make([]byte, 1<<20)
	for i := 0; i < 10000 && len(out.Pending) > 0; i++ {
		for {
			if n, err := ReadNonblock(fds[1], buf); err != nil || n == 0 {
				break
			}
		}
		if evs, err := p.Wait(1000); err != nil || len(evs) == 0 || evs[0].Events&unix.EPOLLOUT == 0 {
			t.Fatalf("no EPOLLOUT while a rest is pending: %v %v", evs, err)
		}
		if err := p.Flush(fds[0], 1, 1, &out); err != nil {
			t.Fatal(err)
		}
	}
	if len(out.Pending) != 0 || out.armed {
		t.Errorf("after draining: %d bytes left, armed %v", len(out.Pending), out.armed)
	}
	if evs, err := p.Wait(0); err != nil || len(evs) != 0 {
		t.Errorf("events after disarming: %v %v", evs, err)
	}
}
