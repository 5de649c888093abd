package result

import "time"

// Load is what one load window measured on the client side: throughput, the
// latency distributions, errors by message, the per-second timeline and the
// client's own CPU.
type Load struct {
	// Mode is "closed" (each connection sends when the previous response
	// arrived) or "rate" (constant arrival rate, open loop).
	Mode        string    `json:"mode"`
	Connections int       `json:"connections"`
	Pipeline    int       `json:"pipeline"`
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
	Seconds     float64   `json:"seconds"`
	// Interrupted is true when the window was cut short (Ctrl-C, a fatal
	// error): the figures cover what finished.
	Interrupted bool `json:"interrupted,omitempty"`

	// Sent counts operations sent; Requests counts those completed OK.
	// Every one sent is in exactly one of Requests, Errors, Timeouts,
	// Unexpected, Misses and OutstandingAtEnd.
	Sent       int64 `json:"sent"`
	Requests   int64 `json:"requests"`
	Bytes      int64 `json:"bytes"`
	Errors     int64 `json:"errors"`
	Timeouts   int64 `json:"timeouts"`
	Unexpected int64 `json:"unexpected"`
	// Misses counts the reads answered without a value for one or more
	// of their keys (a nil reply to GET, a nil element of MGET, fewer
	// rows than keys on a pg path): never a success, not an error; a
	// read path whose miss ratio (MissRatio) exceeds max_miss is
	// UNHEALTHY.
	Misses int64 `json:"misses"`
	// OutstandingAtEnd counts the requests sent in the window and still
	// unanswered at its end: the window ends on time (Seconds is the
	// planned duration), they are neither successes nor failures, and
	// OutstandingOldestUS is the age the oldest of them had at the end.
	// A closed loop always ends with up to one request per connection in
	// flight, each as old as a response takes; one older than the p99
	// threshold makes the sample UNHEALTHY.
	OutstandingAtEnd    int64 `json:"outstanding_at_end,omitempty"`
	OutstandingOldestUS int64 `json:"outstanding_oldest_us,omitempty"`
	// OutstandingAnswered counts those of OutstandingAtEnd answered (a
	// value, or a miss) within the drain after the window
	// (driver.DrainGrace): read and dropped, not requests of the window,
	// but completed by the server, whose own statistics count them.
	OutstandingAnswered int64 `json:"outstanding_answered,omitempty"`
	// Reconnects counts connections reopened during the window: after a
	// failure, or because the server ended a keep-alive connection (closed
	// it while idle, said Connection: close); ReconnectCauses says which.
	Reconnects int64 `json:"reconnects"`
	// ReconnectCauses breaks Reconnects down by why the old connection
	// ended ("server closed idle connection", "Connection: close",
	// "connection reset", "after error"); the counts sum to Reconnects.
	ReconnectCauses map[string]int64 `json:"reconnect_causes,omitempty"`
	// Resent counts requests sent a second time on a new connection
	// because the old one ended before any byte of their responses
	// arrived (as net/http's Transport retries); each is still one of
	// Sent, timed from its first send.
	Resent int64 `json:"resent,omitempty"`
	// Messages counts non-OK outcomes by class and message
	// ("error: connection reset by peer", "unexpected: status 500").
	Messages map[string]int64 `json:"messages,omitempty"`

	// RequestsPerSec and BytesPerSec are totals over Seconds.
	RequestsPerSec float64 `json:"requests_per_sec"`
	BytesPerSec    float64 `json:"bytes_per_sec"`

	// Latency is the headline distribution of OK operations: in rate mode
	// it is measured from each request's due time (corrected for
	// coordinated omission); in closed loop from the actual send.
	Latency Latency `json:"latency"`
	// Service is the distribution measured from the actual send; only in
	// rate mode, where it differs from Latency.
	Service *Latency `json:"service,omitempty"`
	// Ops breaks the figures down by operation class when a driver has
	// more than one (reads and writes of a mixed workload).
	Ops []OpStats `json:"ops,omitempty"`

	Rate *RateStats `json:"rate,omitempty"`

	Timeline []Second `json:"timeline"`
	Client   Client   `json:"client"`
}

// MissRatio is the share of the window's answered reads that missed:
// Misses ÷ (Misses + the reads completed OK), the reads being the "read"
// operations when the window breaks its figures down by operation, else
// all of them. 0 without misses.
func (l *Load) MissRatio() float64 {
	if l.Misses == 0 {
		return 0
	}
	ok := l.Requests
	for _, o := range l.Ops {
		if o.Name == "read" {
			ok = o.Requests
		}
	}
	return float64(l.Misses) / float64(l.Misses+ok)
}

// OpStats are the figures of one class of operation.
type OpStats struct {
	Name       string `json:"name"`
	Requests   int64  `json:"requests"`
	Errors     int64  `json:"errors"`
	Timeouts   int64  `json:"timeouts"`
	Unexpected int64  `json:"unexpected"`
	Misses     int64  `json:"misses,omitempty"`
	// OutstandingAnswered is Load.OutstandingAnswered of this class.
	OutstandingAnswered int64   `json:"outstanding_answered,omitempty"`
	Latency             Latency `json:"latency"`
}

// RateStats are the open-loop figures of a constant-rate window.
type RateStats struct {
	Target  float64 `json:"target"`
	Arrival string  `json:"arrival"`
	// Scheduled counts requests due in the window; Late those that found
	// no free connection when due; Dropped those refused because the
	// backlog was full (never sent).
	Scheduled  int64 `json:"scheduled"`
	Late       int64 `json:"late"`
	Dropped    int64 `json:"dropped"`
	MaxBacklog int   `json:"max_backlog"`
	// Achieved is completed OK requests ÷ window seconds.
	Achieved float64 `json:"achieved"`
	// Coverage = completed ÷ (rate × load seconds) × 100.
	Coverage float64 `json:"coverage"`
	// Lag is how far behind its due time each request was actually sent.
	Lag Latency `json:"lag"`
}

// Second is one second of the timeline, counted by completion time.
type Second struct {
	T        int   `json:"t"`
	Requests int64 `json:"requests"`
	Bytes    int64 `json:"bytes"`
	Errors   int64 `json:"errors"`
	P50US    int64 `json:"p50_us"`
	P99US    int64 `json:"p99_us"`
}

// Client is benchrig's own CPU over the window, from getrusage.
type Client struct {
	UserSeconds   float64 `json:"user_seconds"`
	SystemSeconds float64 `json:"system_seconds"`
	// Cores = (user + system) ÷ window seconds.
	Cores float64 `json:"cores"`
	// UsableCores is what the client may use (CPU affinity, GOMAXPROCS).
	UsableCores int `json:"usable_cores"`
	// Saturated is true above 90 % of UsableCores: the figures then
	// measure the client, not the server.
	Saturated bool `json:"saturated"`
	// RequestsPerCPUSecond = completed ÷ (user + system).
	RequestsPerCPUSecond float64 `json:"requests_per_cpu_second"`
	// CPUPerRequestUS = (user + system) × 10⁶ ÷ completed.
	CPUPerRequestUS float64 `json:"cpu_per_request_us"`
	// BusyPollUS is how long the client's event loops polled for answers
	// before they slept, in µs (placement.busy_poll; 0: they slept at
	// once), and BusyPollSeconds the part of user + system spent in those
	// polls: CPU spent to stay awake, not work per request. Saturated
	// leaves it out.
	BusyPollUS      float64 `json:"busy_poll_us,omitempty"`
	BusyPollSeconds float64 `json:"busy_poll_seconds,omitempty"`
	// IO is how the client's event loops waited for and moved the bytes
	// in the window: "epoll" (epoll_wait, a read and a write per
	// connection served), or "io_uring" when at least one Run of them
	// went on io_uring (placement.io_uring); empty when no event loop
	// ran (a goroutine per connection).
	IO string `json:"io,omitempty"`
	// CoalesceUS is, on io_uring, the longest a wait of the event loops
	// waited for more answers before it handled the first, in µs
	// (placement.coalesce; at most 1 % of the answers' moving-average latency, and
	// 50 µs): how late an answer's latency may have been taken. 0: no wait
	// was coalesced.
	CoalesceUS float64 `json:"coalesce_us,omitempty"`
}
