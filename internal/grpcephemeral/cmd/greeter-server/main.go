// Command greeter-server serves benchrig.test.v1.Greeter (package
// grpcephemeral's greeter.proto, served by grpc-go) as a standalone process,
// for benchmarks beside other gRPC clients (bench/grpc-peers.sh).
//
//	greeter-server [-addr 127.0.0.1:0] [-tls] [-reflection] [-gzip]
//
// Its first line on standard output is "listening on 127.0.0.1:PORT". It
// serves until SIGTERM or SIGINT, then stops gracefully (running calls
// finish; cut after 2 s), writes the calls and request messages it served
// to standard error, and exits 0. With -tls it serves a self-signed
// certificate made at start (clients skip verification). GOMAXPROCS is left
// to the caller.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/benchrig/benchrig/internal/grpcephemeral"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0: a free one)")
	tls := flag.Bool("tls", false, "serve TLS with a self-signed certificate made at start")
	refl := flag.Bool("reflection", false, "register the server reflection service")
	gz := flag.Bool("gzip", false, "accept gzip-compressed calls (answered gzip-compressed)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "greeter-server: unexpected argument %q\n", flag.Arg(0))
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	s, err := grpcephemeral.Start(grpcephemeral.Options{Addr: *addr, TLS: *tls, Reflection: *refl, Gzip: *gz})
	if err != nil {
		fmt.Fprintln(os.Stderr, "greeter-server:", err)
		os.Exit(1)
	}
	// os.Stdout is not buffered: the line is out when Println returns.
	fmt.Println("listening on", s.Addr())
	<-ctx.Done()
	s.Close()
	var calls int64
	for _, n := range s.Calls() {
		calls += n
	}
	fmt.Fprintf(os.Stderr, "greeter-server: served %d calls, %d request messages\n", calls, s.Messages())
}
