// Package http is benchrig's HTTP driver, built for throughput: HTTP/1.1
// over TCP or TLS, and HTTP/2 over TLS (ALPN h2) or cleartext (h2c).
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
// https:// URLs (tls.go, proto.go) use crypto/tls: TLS 1.2 or 1.3, one
// session cache per driver (so reconnects resume), Config.TLS's CA file,
// client certificate and SNI name; the handshake is made when the
// connection opens, outside any request's latency, and counted and timed
// in Stats (a reconnect's handshake is thus recorded apart). Closed-loop
// HTTP/1.1 over TLS runs on the event loops too (loop_tls_linux.go): a
// tls.Conn over an in-memory pipe the loop feeds with ciphertext, read
// without blocking because crypto/tls keeps only non-temporary read
// errors; the handshake itself is blocking, right after the connect.
// HTTP/2 runs on event loops of its own (h2loop_linux.go), which refill
// streams one by one in a closed loop and, at a constant rate, send each
// request due on a free stream (h2paced_linux.go). Without Config.HTTP2 an https:// server is spoken to
// in HTTP/1.1 unless it offers only h2 (resolve). Negotiated reports the
// protocol, TLS version, cipher and ALPN, recorded with each sample.
//
// HTTP/2 is built on x/net's http2.Framer and hpack; the engine's
// pipeline is the streams in flight per connection (h2load's -m). In
// closed-loop windows (h2loop_linux.go, h2lconn_linux.go,
// h2lstream_linux.go, h2lctl_linux.go) each stream that ends is replaced
// at once by a new request on its connection, as h2load does, within the
// server's SETTINGS_MAX_CONCURRENT_STREAMS and flow-control window; the
// new streams of one pass leave in one write per connection, and every
// stream is timed from its own send. DATA, HEADERS and CONTINUATION are
// read without the Framer (it makes an object per HEADERS frame): no
// allocation per request. Where no loop runs (a connection per
// goroutine: Open, Do), Do (h2conn.go, h2read.go) opens one stream per
// request of its batch, all written in one flush, and reads frames until
// every stream ended. The receive
// windows are opened to 1 GiB at once; GOAWAY is a reconnect
// (CauseGoaway) whose unprocessed streams are sent again; RST_STREAM and
// unexpected statuses are counted by message.
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
