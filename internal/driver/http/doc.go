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
//	d, err := http.New(http.Config{URL: "http://127.0.0.1:8080/"})
//	if err != nil {
//		return err
//	}
//	// hand d to load.New
package http
