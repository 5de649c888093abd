// Package driver defines what the load engine asks of a protocol client: open a
// connection, perform operations on it, report each operation's outcome. A
// driver performs operations and knows nothing of pacing, bounds or recording;
// those belong to package load.
package driver

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// Driver opens connections of one protocol to one system under test.
type Driver interface {
	// Name is a short protocol name ("http", "pg", "resp") for reports.
	Name() string
	// Ops names the operation classes this driver reports in Outcome.Op, in
	// index order (for example ["read", "write"] for a mixed workload). A
	// driver with one kind of operation returns ["request"]. Reads and writes
	// are counted and timed separately by the engine.
	Ops() []string
	// MaxPipeline is the largest number of operations Conn.Do accepts at once
	// (1 when the protocol or driver cannot pipeline).
	MaxPipeline() int
	// Open opens one connection for the worker with the given index.
	Open(ctx context.Context, worker int) (Conn, error)
}

// Conn is one connection, owned by one worker goroutine. Do is never called
// concurrently with itself; Close may be called concurrently with Do to abort
// it (the engine does so on cancellation) and must be idempotent.
type Conn interface {
	// Do performs len(reqs) ≥ 1 operations. When len(reqs) > 1 they are
	// pipelined: all are sent, then all responses are read in order. out has
	// the same length as reqs; Do fills every out[i] (Done stamped with Now()
	// when that response was complete, or the failure known), also when it
	// returns an error. It returns a non-nil error only when the connection
	// is unusable afterwards: the engine then closes it and opens a new one.
	// A *Reconnect error says the connection ended in the ordinary course
	// of keep-alive (see Reconnect), any other error that it failed.
	Do(ctx context.Context, reqs []Request, out []Outcome) error
	// Close releases the connection.
	Close() error
}

// Request is one operation the engine asks for. Seq is the operation's global
// sequence number in its run (0, 1, 2, … across all workers), from which a
// workload derives keys and the operation class deterministically.
type Request struct {
	Seq uint64
}

// Class says how an operation ended.
type Class uint8

// Outcome classes. Only OK operations count as completed requests; a Miss
// is never one.
const (
	OK         Class = iota // response received and accepted
	Error                   // failed: connection, protocol or server error
	Timeout                 // no response within the per-request timeout
	Unexpected              // a response arrived but was not the expected one
	// Outstanding is a request sent in the window and not answered at its
	// end (its deadline): neither a success nor a failure, it does not
	// stretch the window. A Loop reports each at the deadline with Done =
	// the deadline; the engine counts it, with its age, in
	// Load.OutstandingAtEnd.
	Outstanding
	// Drained is the answer (OK, or a miss), read while the window drained
	// (after its deadline), to a request a Loop reported Outstanding: not a request
	// of the window, but one the server completed (its own counters hold
	// it), counted in Load.OutstandingAnswered.
	Drained
	// Miss is a read answered without a value for one or more of its keys
	// (a nil reply to GET, a nil element of MGET, fewer rows than keys):
	// neither a success nor an error, its own class (Load.Misses).
	Miss
)

func (c Class) String() string {
	switch c {
	case OK:
		return "ok"
	case Error:
		return "error"
	case Timeout:
		return "timeout"
	case Unexpected:
		return "unexpected"
	case Outstanding:
		return "outstanding"
	case Drained:
		return "drained"
	case Miss:
		return "miss"
	}
	return "unknown"
}

// Outcome is the result of one operation. Per-request failures are data: the
// engine counts them by Msg and goes on.
type Outcome struct {
	Class Class
	// Op indexes Driver.Ops(): which class of operation this was.
	Op uint8
	// Bytes is the number of response bytes read for this operation.
	Bytes int64
	// Done is Now() when the response was complete (or the failure known).
	Done int64
	// Msg describes a non-OK outcome ("status 500", "connection reset by
	// peer"). It should be drawn from a small set: errors are counted by
	// message.
	Msg string
}

var epoch = time.Now()

// Now is a cheap monotonic clock in nanoseconds since process start, shared by
// drivers (to stamp Outcome.Done) and the engine (to stamp sends).
func Now() int64 { return int64(time.Since(epoch)) }

var blockInKernel atomic.Bool

// BlockInKernel reports whether event loops that begin a Run now block in
// epoll_wait themselves rather than park in the Go runtime's poller
// (SetBlockInKernel).
func BlockInKernel() bool { return blockInKernel.Load() }

// SetBlockInKernel says whether the event loops' Runs may block in
// epoll_wait themselves, holding their Go P while they wait, and returns a
// func that restores the setting before. Only a process that is the load
// generator alone may set it (benchrig's command, not a test or an embedder
// serving something of its own beside the load): while every P is held by a
// loop, the process's other goroutines run only when a loop yields, on
// every 32nd wait, after a wait that timed out or was interrupted, and when
// the runtime's monitor preempts a loop that held its P 10 ms, and
// goroutines waiting on the network are found by the monitor's 10 ms poll.
// A server in the same process would answer a request every 10 ms or so.
func SetBlockInKernel(on bool) (restore func()) {
	prev := blockInKernel.Swap(on)
	return func() { blockInKernel.Store(prev) }
}

var busyPoll, busyPolled atomic.Int64

// MaxBusyPoll bounds SetBusyPoll: a longer spin only burns what a sleep
// would have saved.
const MaxBusyPoll = time.Millisecond

// BusyPoll is how long an event loop's closed-loop Run that begins now
// polls its epoll set before it sleeps in a wait (SetBusyPoll); 0: it
// sleeps at once.
func BusyPoll() time.Duration { return time.Duration(busyPoll.Load()) }

// SetBusyPoll says how long the event loops' closed-loop Runs poll before
// they sleep, bounded by MaxBusyPoll, and returns a func that restores the
// setting before. Polling keeps the client's CPU awake between answers, so
// a server's answer wakes no sleeping thread: on a machine (a VM above
// all) where waking an idle CPU costs the server microseconds, a client
// that sleeps between answers makes the server slower than it is. Only a
// client with CPUs of its own should poll: it spends what no one else
// would use. The time spent polling is counted (BusyPolled).
func SetBusyPoll(d time.Duration) (restore func()) {
	d = min(max(d, 0), MaxBusyPoll)
	prev := busyPoll.Swap(int64(d))
	return func() { busyPoll.Store(prev) }
}

// BusyPolled is the time the event loops spent polling before a wait
// (SetBusyPoll) since the process started, counted at the end of each Run.
func BusyPolled() time.Duration { return time.Duration(busyPolled.Load()) }

// AddBusyPolled adds a Run's polling time to BusyPolled.
func AddBusyPolled(d time.Duration) { busyPolled.Add(int64(d)) }

var ioUringOff atomic.Bool
var ringRuns atomic.Int64

// IOUring reports whether a closed loop's Run may go on io_uring rather than
// epoll where its protocol supports it (package evloop; SetIOUring).
func IOUring() bool { return !ioUringOff.Load() }

// SetIOUring says whether closed loops' Runs may go on io_uring, and
// returns a func that restores the setting before.
func SetIOUring(on bool) (restore func()) {
	prev := ioUringOff.Swap(!on)
	return func() { ioUringOff.Store(prev) }
}

var coalesceOff atomic.Bool
var coalesced atomic.Int64

// Coalesce reports whether a Run on io_uring may wait a little for more
// completions before it handles them (package evloop's Poller.Coalesce;
// SetCoalesce).
func Coalesce() bool { return !coalesceOff.Load() }

// SetCoalesce says whether Runs on io_uring may coalesce their waits, and
// returns a func that restores the setting before.
func SetCoalesce(on bool) (restore func()) {
	prev := coalesceOff.Swap(!on)
	return func() { coalesceOff.Store(prev) }
}

// NoteCoalesce keeps d if it is the longest coalesced wait since the last
// TakeCoalesced.
func NoteCoalesce(d time.Duration) {
	for {
		old := coalesced.Load()
		if int64(d) <= old || coalesced.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

// TakeCoalesced returns the longest coalesced wait since the last call (0:
// none), and starts again.
func TakeCoalesced() time.Duration { return time.Duration(coalesced.Swap(0)) }

// RingRuns is how many event-loop Runs went on io_uring since the process
// started, counted as each begins: a window whose count moved was driven,
// at least in part, on io_uring.
func RingRuns() int64 { return ringRuns.Load() }

// AddRingRun counts a Run that goes on io_uring.
func AddRingRun() { ringRuns.Add(1) }

// Wall converts a Now() value back to wall-clock time.
func Wall(now int64) time.Time { return epoch.Add(time.Duration(now)) }

// Multiplexer is implemented by drivers that can drive all of a window's
// connections from one goroutine (an event loop), which costs the client
// less CPU than a goroutine per connection: responses that arrive together
// are read in one pass and the next requests leave in a burst. The engine
// uses it for closed-loop windows, and for constant-rate windows when its
// loops pace (PacedLoop).
type Multiplexer interface {
	// OpenLoop opens conns connections driven by one Loop. Any failure is
	// a setup error: nothing stays open.
	OpenLoop(ctx context.Context, conns int) (Loop, error)
}

// Loop drives a set of connections from one goroutine.
type Loop interface {
	// Run drives the closed loop: each connection sends a batch of up to
	// pipeline requests, claimed from w, whenever its previous batch is
	// answered, and reports every outcome to w. It returns when w.Claim
	// says stop and every in-flight response is in. At the deadline
	// (Now() units, 0 = none) the window ends on time: it sends nothing
	// more and reports every request still in flight as Outstanding
	// (Done = the deadline, sent = its send). It then drains: the answers
	// that come within DrainGrace are read and dropped (an OK one is
	// reported Drained, once more for the same request), and a
	// connection still waiting after it is closed (reopened by the next
	// Run, a reconnect with CauseWindowEnd); so Run returns within
	// DrainGrace of the deadline, whatever the request timeout. When ctx
	// ends it returns ctx.Err() promptly, without reporting the requests
	// in flight. A failed connection is reopened (after a pause when
	// requests failed), never past the deadline; a failed reopen fails the
	// requests claimed for it. Run is not called concurrently with itself.
	Run(ctx context.Context, pipeline int, deadline int64, w LoopWork) error
	// Close closes every connection. It is idempotent and safe to call
	// concurrently with Run, which it ends.
	Close() error
}

// PacedLoop is a Loop whose Run also drives an open loop: given a
// PacedWork, it sends each request on a connection with none in flight
// when the request is due (a timer armed for the next due time, so one
// wake-up sends every request due by then), never calling Claim, and
// reports each outcome with Record's sent as its send time.
type PacedLoop interface {
	Loop
	// Paces reports that Run accepts a PacedWork.
	Paces() bool
}

// StreamPacer is a Driver whose event loops pace a constant rate with up
// to pipeline requests in flight per connection (HTTP/2's streams, h2load's
// --rps with -m): a request due goes out on any free stream. A rate with a
// pipeline above 1 needs it; other drivers' loops send a request due on a
// connection with none in flight.
type StreamPacer interface {
	PacesStreams() bool
}

// PaceChecker is a Multiplexer that says, before opening any connection,
// whether its loops would pace: the engine opens loops for a constant
// rate only when they do (else a goroutine per connection, with no
// connections opened and closed for nothing). A Multiplexer without it is
// asked by opening its loops.
type PaceChecker interface {
	LoopsPace(ctx context.Context) bool
}

// PacedWork is the LoopWork of an open loop (a constant rate): the
// schedule and the backlog of due requests waiting for a connection are
// the work's; the loop only says when it has connections free and takes
// the due requests.
type PacedWork interface {
	LoopWork
	// Due moves every request due by now into the backlog (those beyond
	// free, the connections able to take one at once, are late; a full
	// backlog drops them) and returns when the next one is due
	// (math.MaxInt64: none is left to schedule) and whether any request
	// is left, scheduled or waiting.
	Due(now int64, free int) (next int64, more bool)
	// Take takes the backlog's oldest request for a send at now (unique
	// per request: a loop sending several in one pass gives each its own
	// now); ok is false when the backlog is empty.
	Take(now int64) (seq uint64, ok bool)
}

// LoopWork is the engine's side of a Loop's Run, called from Run's
// goroutine only.
type LoopWork interface {
	// Claim asks for up to n sequence numbers; it returns the first and
	// how many were granted, 0 meaning stop.
	Claim(n int) (seq uint64, k int)
	// Record reports one claimed request's outcome; sent is when it was
	// sent (Now() units). Every claimed request is recorded exactly once
	// unless ctx ends first.
	Record(o *Outcome, sent int64)
	// Reconnected reports that a connection was reopened, and why (one of
	// the Cause constants, or a driver's own short cause); resent is how
	// many of the requests the old connection left unanswered were sent
	// again on the new one (their latency still runs from the first send,
	// so Record's sent is the original send time).
	Reconnected(cause string, resent int)
}

// Reconnect causes, counted by cause in the results (Load.ReconnectCauses).
// A connection that ended in the ordinary course of keep-alive is reopened
// without an error; one that failed is reopened after its errors were
// counted, with CauseError.
const (
	// CauseIdleClosed: the server closed the connection while it was idle
	// (its keep-alive timeout), or before any byte of the response to a
	// request sent on the reused connection arrived.
	CauseIdleClosed = "server closed idle connection"
	// CauseClose: the server said it would close (Connection: close, or
	// an HTTP/1.0 response without keep-alive).
	CauseClose = "Connection: close"
	// CauseReset: the connection was reset before any byte of a response
	// arrived on the reused connection.
	CauseReset = "connection reset"
	// CauseError: the connection failed and its failures were counted
	// as errors (by message, in Load.Messages).
	CauseError = "after error"
	// CauseWindowEnd: a request was still outstanding on the connection
	// DrainGrace after the previous window's end, and it was closed.
	CauseWindowEnd = "request outstanding at the previous window's end"
)

// DrainGrace is how long a window waits, after its deadline, for the
// answers to the requests outstanding at its end (counted as such,
// whatever comes back): then the connections still waiting are closed,
// to be reopened by the next window. A window's figures end at its
// deadline; the window returns within DrainGrace after it, whatever the
// per-request timeout.
const DrainGrace = time.Second

// Reconnect is the error Conn.Do returns when its connection ended the way
// keep-alive connections end, not by a failure of the server: the server
// closed it while idle, or said Connection: close. The engine drops the
// connection, counts a reconnect with Cause and, when Retry is set, sends
// reqs[From:] once more on a new connection (as net/http's Transport does),
// timing them from the first send. Do has filled out[From:] with the
// failures to count when they are not sent again (Retry false, a failed
// reopen, or a second Reconnect on the new connection: a request is
// re-sent at most once).
type Reconnect struct {
	Cause string
	// From is the first request left unanswered (len(out) when all were
	// answered, as after Connection: close).
	From int
	// Retry says reqs[From:] may be sent on a new connection: nothing of
	// their responses arrived and they are safe to repeat (idempotent, or
	// the driver was told repeating is fine), or were never written.
	Retry bool
	// Written says reqs[From:] had been written: sending them again is a
	// re-send (Load.Resent), not a first send.
	Written bool
}

func (r *Reconnect) Error() string {
	return "reconnect: " + r.Cause
}

// ErrNoLoop is wrapped by a Multiplexer's OpenLoop error when the driver's
// configuration cannot be driven by an event loop; the engine then uses a
// goroutine per connection instead of failing.
var ErrNoLoop = errors.New("no event loop for this configuration")
