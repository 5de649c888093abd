package result

// Floor is benchrig's own measurement floor on this machine: its latency
// and client CPU per operation against a null peer (a server process on
// loopback that answers a fixed response and does nothing else), for
// each protocol of the run. A figure of the run near its floor measures
// benchrig, not the target.
type Floor struct {
	// Seconds is how long each protocol was driven.
	Seconds float64 `json:"seconds"`
	// Protocols holds one entry per protocol measured, in a fixed order
	// (http, pg, resp).
	Protocols []FloorEntry `json:"protocols"`
	// Skipped says why no floor was measured (--no-calibrate).
	Skipped string `json:"skipped,omitempty"`
}

// FloorEntry is the floor of one protocol's driver.
type FloorEntry struct {
	Protocol string `json:"protocol"`
	// Connections is how many connections drove the null peer, closed
	// loop (0, in a file written before levels were measured: one).
	Connections int `json:"connections,omitempty"`
	// Requests completed against the null peer over Connections
	// connections, closed loop.
	Requests int64 `json:"requests"`
	// P50US and P99US are the latency percentiles, in microseconds.
	P50US int64 `json:"p50_us"`
	P99US int64 `json:"p99_us"`
	// RoundTripUS is the window's seconds × 10⁶ ÷ requests: the mean time
	// from one request to the next on the connection, the engine's own
	// work between them included.
	RoundTripUS float64 `json:"round_trip_us"`
	// ClientCPUUS is benchrig's own CPU per request, in microseconds: the
	// process's CPU over the measured window, as a run's figure is (the
	// null peer is a process of its own; before 2026-12-06 the connects
	// and the warm-up were counted in).
	ClientCPUUS float64 `json:"client_cpu_us"`
	// PeerCPUUS is the null peer's CPU per request, in microseconds (0 in
	// a file written before the peer had a process of its own).
	PeerCPUUS float64 `json:"peer_cpu_us,omitempty"`
	// PeerCPUs are the CPUs the null peer ran on when they were apart
	// from the client's (the online CPUs outside benchrig's affinity, as
	// under taskset); empty when it shared the client's.
	PeerCPUs string `json:"peer_cpus,omitempty"`
	// Error says why the protocol's floor could not be measured.
	Error string `json:"error,omitempty"`
}

// Conns is the entry's connection count (1 when the file did not say).
func (e *FloorEntry) Conns() int { return max(e.Connections, 1) }

// Entry returns the floor of protocol p at one connection (else its first
// level), or nil.
func (f *Floor) Entry(p string) *FloorEntry {
	if f == nil {
		return nil
	}
	var first *FloorEntry
	for i := range f.Protocols {
		if e := &f.Protocols[i]; e.Protocol == p {
			if e.Conns() == 1 {
				return e
			}
			if first == nil {
				first = e
			}
		}
	}
	return first
}

// At returns the floor of protocol p measured at conns connections, or
// nil.
func (f *Floor) At(p string, conns int) *FloorEntry {
	if f == nil {
		return nil
	}
	for i := range f.Protocols {
		if e := &f.Protocols[i]; e.Protocol == p && e.Conns() == conns {
			return e
		}
	}
	return nil
}
