// Command greeter-server serves benchrig.test.v1.Greeter (package
// grpcephemeral's greeter.proto, served by grpc-go) as a standalone process,
// for benchmarks beside other gRPC clients (bench/grpc-peers.sh).
//
//	greeter-server [-addr 127.0.0.1:0] [-tls] [-reflection] [-gzip]
//	greeter-server -json [-addr 127.0.0.1:0]
//
// Its first line on standard output is "listening on 127.0.0.1:PORT". It
// serves until SIGTERM or SIGINT, then stops gracefully (running calls
// finish; cut after 2 s), writes the calls and request messages it served
// to standard error, and exits 0. With -tls it serves a self-signed
// certificate made at start (clients skip verification). GOMAXPROCS is left
// to the caller.
//
// With -json it serves the same SayHello as JSON over HTTP/1.1 (net/http,
// cleartext) instead of gRPC: POST /benchrig.test.v1.Greeter/SayHello with
// a body {"name":"x","id":1} is answered {"message":"hello x","id":"1"}
// (gRPC's JSON mapping: an int64 as a string), Content-Type
// application/json; another method is 405, a body that is not a JSON
// HelloRequest 400, another path 404.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/benchrig/benchrig/internal/grpcephemeral"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0: a free one)")
	tls := flag.Bool("tls", false, "serve TLS with a self-signed certificate made at start")
	refl := flag.Bool("reflection", false, "register the server reflection service")
	gz := flag.Bool("gzip", false, "accept gzip-compressed calls (answered gzip-compressed)")
	asJSON := flag.Bool("json", false, "serve SayHello as JSON over HTTP/1.1 instead of gRPC")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "greeter-server: unexpected argument %q\n", flag.Arg(0))
		flag.Usage()
		os.Exit(2)
	}
	if *asJSON && (*tls || *refl || *gz) {
		fmt.Fprintln(os.Stderr, "greeter-server: -json serves HTTP/1.1 in cleartext: -tls, -reflection and -gzip are gRPC's; give them without -json")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if *asJSON {
		if err := serveJSON(ctx, *addr); err != nil {
			fmt.Fprintln(os.Stderr, "greeter-server:", err)
			os.Exit(1)
		}
		return
	}
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

// serveJSON serves SayHello as JSON over HTTP/1.1 on addr until ctx ends,
// then stops as the gRPC server does: running requests finish, cut after
// 2 s.
func serveJSON(ctx context.Context, addr string) error {
	j, err := newJSONServer()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: j, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Println("listening on", ln.Addr())
	select {
	case err := <-served: // the listener failed
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	}
	fmt.Fprintf(os.Stderr, "greeter-server: served %d calls, %d request messages\n", j.calls.Load(), j.messages.Load())
	return nil
}
