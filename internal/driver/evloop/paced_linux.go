package evloop

import (
	"math"

	"github.com/benchrig/benchrig/internal/driver"
)

var _ driver.PacedLoop = (*Loop)(nil)

// Paces implements driver.PacedLoop: Run drives a driver.PacedWork as an
// open loop.
func (l *Loop) Paces() bool { return true }

// sendDue is an open loop's pass (Run with a driver.PacedWork): the
// connections that came free join the idle ones, the work moves what is
// due into its backlog, and each idle connection takes the oldest request
// waiting, one each, with a send time of its own. It sets wakeAt: when the
// next request is due, if a connection is idle to take it (with none idle,
// an answer wakes the loop first); math.MaxInt64 else.
func (l *Loop) sendDue() {
	l.wakeAt = math.MaxInt64
	now := driver.Now()
	if l.Deadline != 0 && now >= l.Deadline {
		if !l.dueAtEnd {
			// the window's end: what fell due before it and was not
			// sent is the work's to count (waiting, late; dropped)
			l.paced.Due(l.Deadline-1, 0)
			l.dueAtEnd = true
		}
		l.Stopping = true
	}
	for _, c := range l.ready {
		c.queued = false
		if !c.idle {
			c.idle = true
			l.idle = append(l.idle, c)
		}
	}
	l.ready = l.ready[:0]
	k := 0
	for _, c := range l.idle {
		if c.St == Open && c.Inflight == 0 && c.Resend == 0 {
			l.idle[k] = c
			k++
		} else {
			c.idle = false
		}
	}
	clear(l.idle[k:])
	l.idle = l.idle[:k]
	if l.Stopping {
		return
	}
	next, more := l.paced.Due(now, len(l.idle))
	for len(l.idle) > 0 {
		at := max(now, l.stamp+1) // a send time of its own: the work keys each request by it
		seq, ok := l.paced.Take(at)
		if !ok {
			break
		}
		l.stamp = at
		c := l.idle[len(l.idle)-1]
		l.idle[len(l.idle)-1] = nil
		l.idle = l.idle[:len(l.idle)-1]
		c.idle = false
		if l.Timeout > 0 {
			l.Alarm.Set(at + l.Timeout)
		}
		l.H.Send(c, seq, 1, at)
	}
	if !more {
		if _, waiting := l.paced.Due(now, 0); !waiting {
			l.Stopping = true // the schedule is over and nothing waits
		}
		return
	}
	if len(l.idle) > 0 {
		l.wakeAt = next
	}
}
