// Package calibrate measures benchrig's own floor on the machine it runs
// on: for each driver (HTTP/1.1, pg wire, RESP), the latency percentiles
// and the client CPU per request of closed-loop connections (one, and any
// other counts asked for) against an in-process null peer on 127.0.0.1
// that answers a fixed response and does nothing else. The peer serves
// each connection on an OS thread of its own with blocking system calls,
// so the CPU it used is those threads' (getrusage RUSAGE_THREAD) and is
// taken out of the process's.
//
// Example:
//
//	f := calibrate.Measure(ctx, []string{"http", "resp"}, []int{1, 8}, calibrate.RunFloor)
//	for _, e := range f.Protocols {
//		fmt.Println(e.Protocol, e.Conns(), e.P50US, e.P99US, e.ClientCPUUS)
//	}
package calibrate
