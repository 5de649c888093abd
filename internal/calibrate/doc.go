// Package calibrate measures benchrig's own floor on the machine it runs
// on: for each driver (HTTP/1.1, pg wire, RESP, gRPC), the latency
// percentiles and the client CPU per request of closed-loop connections
// (one, and any other counts asked for) against a null peer on 127.0.0.1
// that answers a fixed response and does nothing else.
//
// The null peer is a process of its own, as a server is: benchrig re-executed
// (see child.go), serving its connections from a few epoll loops (see
// server). When some online CPUs are outside benchrig's affinity, it runs
// there (benchrig under taskset -c 1 puts it on CPU 0, where the server of
// such a run is) and polls rather than sleeps, so the client never pays to
// wake it; else it shares benchrig's CPUs and sleeps between events. The
// client CPU per request is the process's own (getrusage RUSAGE_SELF,
// which counts no child): what a run against a server on CPUs of its own
// spends at least, at the same connection count. The peer's CPU is
// recorded beside it.
//
// Example:
//
//	f := calibrate.Measure(ctx, []string{"http", "resp"}, []int{1, 8}, calibrate.RunFloor)
//	for _, e := range f.Protocols {
//		fmt.Println(e.Protocol, e.Conns(), e.P50US, e.P99US, e.ClientCPUUS)
//	}
package calibrate
