// Package grpcephemeral runs a real grpc-go server for benchmarks and tests,
// in-process, on a free loopback port: the service benchrig.test.v1.Greeter
// of greeter.proto (embedded; see Proto), with no generated code. The .proto
// is compiled when first needed (protocompile), requests and replies are
// dynamicpb messages, and the service is registered with a hand-built
// grpc.ServiceDesc. The server counts the calls it handles and the request
// messages it receives, so that tests can hold benchrig's counts against the
// server's own.
//
// The methods (see greeter.proto): SayHello answers "hello " + name with the
// request's id; Fail answers with the status it is asked for; Sleep answers
// after ms milliseconds or ends with the call's context; Lots streams count
// replies; Collect answers "collected N" once the client has sent its N
// requests; Chat answers each request; Missing is declared but not served,
// so grpc-go answers UNIMPLEMENTED by itself.
//
// Example:
//
//	srv := grpcephemeral.StartT(t, grpcephemeral.Options{TLS: true})
//	ca, err := srv.CACertFile(t.TempDir())
//	// … run benchrig against srv.Addr(), trusting ca …
//	if got := srv.Calls()["SayHello"]; got != want {
//		t.Errorf("server handled %d SayHello calls, benchrig counted %d", got, want)
//	}
//
// cmd/greeter-server serves the same service as a standalone process, for
// benchmarks beside other clients (bench/grpc-peers.sh), and with -json
// its SayHello as JSON over HTTP/1.1. StartNode runs the same service on
// @grpc/grpc-js (examples/grpc/server.js, Node 24 from npm) for tests that
// hold the two servers to the same answers.
package grpcephemeral
