// Package http is benchrig's HTTP/1.1 driver, built for throughput.
//
// Closed-loop windows run on event loops (loop_linux.go): raw non-blocking
// sockets and epoll on a goroutine locked to its OS thread, one loop per core
// the client may use, in wrk's style — every ready response is read and
// parsed in one pass (a resumable parser over each connection's buffer),
// then the next requests leave in a burst. This spends about as much client
// CPU per request as wrk (bench/http-peers.sh); a goroutine per connection
// over net.Conn cost about 15 % more, in the Go scheduler and netpoller.
//
// The blocking driver (Open, Conn.Do over net.Conn with a bufio parser)
// serves everything else: constant-rate windows, probes, checks. Both share
// the request bytes prepared once, the response checks (status, body equals,
// body contains) and the short error messages counted by the engine.
//
// Connections are reused as net/http's Transport reuses them. A connection
// the server closed while idle (its keep-alive timeout: Node's 5 s,
// nginx's 75 s), or that ends before any byte of a response arrived after
// it had carried responses, is reopened and its unanswered requests sent
// once more when they are idempotent (GET, HEAD, OPTIONS, TRACE, PUT,
// DELETE; any method with Config.RetryUnsafe): a reconnect counted by
// cause (driver.Cause…, Load.ReconnectCauses), not an error. A re-sent
// request is timed from its first send. A connection that breaks in the
// middle of a response fails its requests, as before.
//
// Framing is checked in both parsers: bytes with no request outstanding
// (past a response's Content-Length, a response nobody asked for, bytes
// on an idle connection), conflicting Content-Length headers and
// Content-Length beside chunked Transfer-Encoding are errors counted by
// message, and the connection is replaced.
//
// Several requests (Config.Requests, read from a vegeta-style request
// file by LoadTargets) are each prepared once; every request's sequence
// number picks one, in order with weights or at random from a seed.
//
//	d, err := http.New(http.Config{URL: "http://127.0.0.1:8080/"})
//	if err != nil {
//		return err
//	}
//	// hand d to load.New
package http
