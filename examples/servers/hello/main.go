// Command hello is the demo target: a minimal Go HTTP server answering
// "hello" on every path. It prints "listening on ADDR" once it accepts
// connections, so scripts and tests can use port 0. -idle-timeout sets how
// long a keep-alive connection may stay idle before the server closes it
// (http.Server.IdleTimeout; 0, the default, means never), to try a client
// against a server that closes idle connections, as Node (5 s) and nginx
// (75 s) do.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address (port 0 picks a free one)")
	idle := flag.Duration("idle-timeout", 0, "close keep-alive connections idle this long (0: never)")
	flag.Parse()
	if *idle < 0 {
		log.Fatalf("-idle-timeout %s: want 0 (never) or a positive duration", *idle)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	os.Stdout.Sync()
	body := []byte("hello\n")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(body)
	})
	srv := &http.Server{Handler: h, IdleTimeout: *idle}
	log.Fatal(srv.Serve(ln))
}
