// Package driver defines what the load engine asks of a protocol client: open a
// connection, perform operations on it, report each operation's outcome. A
// driver performs operations and knows nothing of pacing, bounds or recording;
// those belong to package load.
package driver

import (
	"context"
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

// Outcome classes. Only OK operations count as completed requests.
const (
	OK         Class = iota // response received and accepted
	Error                   // failed: connection, protocol or server error
	Timeout                 // no response within the per-request timeout
	Unexpected              // a response arrived but was not the expected one
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

// Wall converts a Now() value back to wall-clock time.
func Wall(now int64) time.Time { return epoch.Add(time.Duration(now)) }
