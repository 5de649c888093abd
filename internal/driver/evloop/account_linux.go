package evloop

import "github.com/benchrig/benchrig/internal/driver"

// Answered takes one answered request off c. It reports whether its
// outcome is to be recorded: not when the request was stale (reported
// Outstanding at the window's end), whose answer counts only as
// driver.Drained, if at all.
func (l *Loop) Answered(c *Conn) bool {
	c.Inflight--
	if !c.Stale {
		l.Inflight--
		return true
	}
	if c.Inflight == 0 {
		c.Stale = false
		l.stale--
	}
	return false
}

// FailOutstanding records o, with each one's Op, for every request c has
// in flight (none when they were reported Outstanding at a window's end:
// counted then), and takes them off.
func (l *Loop) FailOutstanding(c *Conn, o *driver.Outcome) {
	if c.Stale {
		c.Inflight, c.Stale = 0, false
		l.stale--
		return
	}
	for ; c.Inflight > 0; c.Inflight-- {
		o.Op = l.H.Op(c, c.Inflight)
		l.Inflight--
		l.W.Record(o, c.Sent)
	}
}

// endWindow ends the window at its deadline: every request still in
// flight is reported Outstanding (Done = the deadline). Requests on the
// wire stay on their connection, stale, for DrainGrace: their answers,
// when they come, are read and dropped (Answered, FailOutstanding); then
// cutStale closes the connection. Requests waiting for a reopen to be
// sent again are forgotten.
func (l *Loop) endWindow() {
	l.ended = true
	l.Alarm.Set(l.Deadline + int64(driver.DrainGrace))
	for _, c := range l.Conns {
		if c.Inflight == 0 || c.Stale {
			continue
		}
		o := driver.Outcome{Class: driver.Outstanding, Done: l.Deadline}
		for j := c.Inflight; j > 0; j-- {
			o.Op = l.H.Op(c, j)
			l.W.Record(&o, c.Sent)
		}
		l.Inflight -= c.Inflight
		if c.St == Open && c.Resend == 0 {
			c.Stale = true
			l.stale++
		} else {
			c.Inflight, c.Resend = 0, 0
		}
	}
}

// cutStale closes, DrainGrace after the deadline, the connections whose
// requests are still outstanding: the next Run reopens them (a reconnect
// with driver.CauseWindowEnd).
func (l *Loop) cutStale() {
	for _, c := range l.Conns {
		if c.Stale {
			l.H.Drop(c)
			c.Inflight, c.Stale = 0, false
			c.Cause, c.Reopen = driver.CauseWindowEnd, true
		}
	}
	l.stale = 0
}

// abort closes every connection after cancellation, forgetting the
// requests in flight.
func (l *Loop) abort() {
	for _, c := range l.Conns {
		l.H.Drop(c)
		c.Inflight, c.Resend, c.Stale = 0, 0, false
	}
	l.Inflight, l.stale = 0, 0
}
