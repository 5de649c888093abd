package agent

import "time"

// ClockRounds is how many NTP-style exchanges measure an agent's clock: the
// one with the shortest round trip gives the offset.
const ClockRounds = 8

// Offset is an agent's clock against the coordinator's.
type Offset struct {
	// Offset is the agent's wall clock minus the coordinator's.
	Offset time.Duration
	// RTT is the round trip of the exchange it came from.
	RTT time.Duration
}

// offsetOf is NTP's formula: t0 coordinator send, t1 agent receive, t2
// agent send, t3 coordinator receive (Unix ns, each on its own clock).
func offsetOf(t0, t1, t2, t3 int64) Offset {
	return Offset{Offset: time.Duration(((t1 - t0) + (t2 - t3)) / 2), RTT: time.Duration((t3 - t0) - (t2 - t1))}
}

// best keeps the exchange with the shortest round trip.
func best(a, b Offset, first bool) Offset {
	if first || b.RTT < a.RTT {
		return b
	}
	return a
}
