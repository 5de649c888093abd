// Package http is benchrig's HTTP/1.1 driver: a raw keep-alive client built for
// throughput. It writes a request prepared once as bytes and parses only what
// a load generator needs from the response (status, framing, optional body
// check), reading through a reused buffer, so the client spends its CPU on
// syscalls and not on header maps. net/http allocates per request and
// fasthttp's client carries a pool, header objects and retries we do not
// want; measured side by side (bench/http-peers.sh) this path costs about as
// much client CPU per request as wrk.
//
//	d, err := http.New(http.Config{URL: "http://127.0.0.1:8080/"})
//	if err != nil {
//		return err
//	}
//	// hand d to load.New
package http
