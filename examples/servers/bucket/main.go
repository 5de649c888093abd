// Command bucket is an HTTP server with a known capacity, for trying
// benchrig capacity: it answers 200 "ok" to the requests within a token
// bucket of -rate per second and 503 to every request above it.
//
//	bucket -addr 127.0.0.1:8080 -rate 400
//	benchrig capacity http://127.0.0.1:8080/ --from 50 --max 3200 -d 2s
//
// Its first line on stdout is "listening on ADDR"; PORT, when set, is the
// port of a default -addr (as benchrig's --target sets it).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/benchrig/benchrig/internal/capacity/bucketserver"
)

func main() {
	addr := "127.0.0.1:0"
	if p := os.Getenv("PORT"); p != "" {
		addr = net.JoinHostPort("127.0.0.1", p)
	}
	flag.StringVar(&addr, "addr", addr, "address to listen on")
	rate := flag.Float64("rate", 400, "requests per second answered 200; the rest get 503")
	flag.Parse()
	b, err := bucketserver.NewBucket(*rate)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bucket:", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bucket:", err)
		os.Exit(1)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	srv := &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "bucket:", err)
		os.Exit(1)
	}
}
