// Package resptest is a tiny in-process RESP2 server for tests, in the manner
// of net/http/httptest: it listens on 127.0.0.1 on a free port and serves
// PING, AUTH, GET, MGET, SET, INCR, DEL and QUIT from a map, with hooks that
// make it misbehave on purpose (close the connection in the middle of a
// reply), optional TLS with a generated self-signed certificate, and an
// optional required password.
//
// Example:
//
//	srv, err := resptest.Start(resptest.Options{Password: "s3cret"})
//	if err != nil {
//		t.Fatal(err)
//	}
//	defer srv.Close()
//	srv.Set("item:1", []byte("one"))
//	conn, err := net.Dial("tcp", srv.Addr())
//	// … speak RESP2 to conn …
package resptest
