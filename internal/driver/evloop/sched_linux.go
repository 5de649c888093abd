package evloop

import (
	"math"

	"golang.org/x/sys/unix"
)

// Alarm is the earliest time (driver.Now() units) at which a loop must look
// at its timers again: request timeouts, reopens after a back-off, the
// deadline. A loop clears it before each scan of its connections and sets
// it for every timer it finds pending. The zero value is due at once.
type Alarm int64

// Clear forgets every timer.
func (a *Alarm) Clear() { *a = math.MaxInt64 }

// Set makes the alarm due by t at the latest.
func (a *Alarm) Set(t int64) {
	if t < int64(*a) {
		*a = Alarm(t)
	}
}

// Due reports whether the alarm is due at now.
func (a Alarm) Due(now int64) bool { return now >= int64(a) }

// WaitMS is how long Wait may block at now before the alarm is due, in
// milliseconds rounded up (-1: no timer pending).
func (a Alarm) WaitMS(now int64) int {
	if a == math.MaxInt64 {
		return -1
	}
	return int(max((int64(a)-now+999_999)/1e6, 0))
}

// Outbox is a socket's unwritten request bytes and whether EPOLLOUT is
// armed for them.
type Outbox struct {
	Pending []byte
	armed   bool
}

// Reset empties the outbox of a closed socket.
func (o *Outbox) Reset() { *o = Outbox{} }

// Flush writes what is pending in out to fd. While the socket buffer is
// full it arms EPOLLOUT for fd (registered with tag and gen) and disarms it
// once everything is written; call it again on EPOLLOUT. On a ring, the
// send is queued for the pass's io_uring_enter, and out.Pending's bytes
// must stay as they are until the request is answered.
func (p *Poller) Flush(fd int, tag, gen int32, out *Outbox) error {
	if p.ring != nil { // sent whole by the ring, which reports only a failure
		b := out.Pending
		out.Pending = nil
		if len(b) == 0 {
			return nil
		}
		return p.ring.send(fd, b, ringData(kindSend, int(tag), uint32(gen)), true)
	}
	rest, err := WriteNonblock(fd, out.Pending)
	if err != nil {
		return err
	}
	out.Pending = rest
	switch {
	case rest != nil && !out.armed:
		out.armed = true
		return p.Mod(fd, unix.EPOLLIN|unix.EPOLLOUT, tag, gen)
	case rest == nil && out.armed:
		out.armed = false
		return p.Mod(fd, unix.EPOLLIN, tag, gen)
	}
	return nil
}
