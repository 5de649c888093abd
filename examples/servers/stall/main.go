// Command stall is a small HTTP server for testing benchrig: it answers
// "hello" after a fixed service time, and can stall once (like a GC pause or a
// held lock), burn CPU instead of sleeping, or crash after a number of
// requests.
//
//	stall -addr 127.0.0.1:0 -delay 1ms -stall-after 3s -stall-for 1s
//
// Its first line on stdout is "listening on ADDR", with the actual address,
// so a test that asked for port 0 can find the port.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "stall:", err)
		os.Exit(1)
	}
}

// server holds the configuration and the little state the handler needs.
type server struct {
	delay      time.Duration // normal service time
	burn       bool          // spin on the CPU for delay instead of sleeping
	stallAfter time.Duration // the stall starts this long after the first request…
	stallFor   time.Duration // …and lasts this long (0: never stall)
	exitAfter  int64         // exit 1 after this many requests (0: never)
	locked     time.Duration // then sleep this long holding one lock all requests share
	lock       sync.Mutex
	stderr     io.Writer

	firstOnce sync.Once
	stallFrom time.Time // set once, at the first request
	requests  atomic.Int64
}

// run parses flags, listens, and serves until ctx is done.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("stall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address (port 0: any free port)")
	s := &server{stderr: stderr}
	fs.DurationVar(&s.delay, "delay", time.Millisecond, "normal service time of a request")
	fs.BoolVar(&s.burn, "burn", false, "burn CPU for -delay instead of sleeping")
	fs.DurationVar(&s.stallAfter, "stall-after", 0, "start the one stall this long after the first request")
	fs.DurationVar(&s.stallFor, "stall-for", 0, "length of the stall (0: no stall)")
	fs.Int64Var(&s.exitAfter, "exit-after", 0, "exit with status 1 after this many requests (0: never)")
	fs.DurationVar(&s.locked, "locked", 0, "after -delay, sleep this long holding a lock every request shares (a serialised share of locked/(delay+locked): the USL's σ)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if s.delay < 0 || s.stallAfter < 0 || s.stallFor < 0 || s.exitAfter < 0 || s.locked < 0 {
		return errors.New("-delay, -stall-after, -stall-for, -exit-after and -locked must not be negative")
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())

	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ServeHTTP serves one request: service time, then the stall if the
// response is due inside the stall window, then "hello".
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.firstOnce.Do(func() { s.stallFrom = time.Now().Add(s.stallAfter) })
	n := s.requests.Add(1)

	if s.burn {
		burn(s.delay)
	} else if s.delay > 0 {
		time.Sleep(s.delay)
	}
	if s.locked > 0 {
		s.lock.Lock()
		time.Sleep(s.locked)
		s.lock.Unlock()
	}

	// A response that would leave during the stall is held until it ends,
	// as every request is during a stop-the-world pause.
	if s.stallFor > 0 {
		now := time.Now()
		stallTo := s.stallFrom.Add(s.stallFor)
		if !now.Before(s.stallFrom) && now.Before(stallTo) {
			time.Sleep(stallTo.Sub(now))
		}
	}

	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", strconv.Itoa(len("hello")))
	_, _ = io.WriteString(w, "hello")
	if s.exitAfter > 0 && n >= s.exitAfter {
		// Send this response, then crash as a failing server would.
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		fmt.Fprintf(s.stderr, "exiting after %d requests\n", n)
		os.Exit(1)
	}
}

// burn keeps the CPU busy for d of wall time.
func burn(d time.Duration) {
	end := time.Now().Add(d)
	x := uint64(1)
	for time.Now().Before(end) {
		for i := 0; i < 1000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink.Store(x)
}

// sink keeps the burn loop from being optimized away.
var sink atomic.Uint64
