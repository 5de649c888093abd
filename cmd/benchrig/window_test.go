package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/pgephemeral"
	"github.com/benchrig/benchrig/internal/protocol/pg/driver/pgtest"
)

// stallAfter is how many requests the stalling servers of these tests
// answer before they stop answering (keeping every connection open).
const stallAfter = 20

// stallingServer accepts connections and answers the first stallAfter
// requests, over all connections, with answer(line) for each request it
// reads with read; after that it reads on and answers nothing. It returns
// the address.
func stallingServer(t *testing.T, read func(*bufio.Reader) (string, error), answer func(req string) string) string {
	t.Helper()
	var n atomic.Int64
	return serveEach(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := read(br)
			if err != nil {
				return
			}
			if a := answer(req); a != "" && (req == "PING" || n.Add(1) <= stallAfter) {
				if _, err := io.WriteString(c, a); err != nil {
					return
				}
			}
		}
	})
}

// serveEach listens on 127.0.0.1, runs handle on each connection it
// accepts (closing the connection when handle returns), and closes the
// listener and every connection when t ends. It returns the address.
func serveEach(t *testing.T, handle func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// readHTTP reads one request head (the requests have no body).
func readHTTP(br *bufio.Reader) (string, error) {
	first := ""
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		if first == "" {
			first = line
		}
		if line == "\r\n" {
			return first, nil
		}
	}
}

// readRESP reads one command (an array of bulk strings) and returns its
// name.
func readRESP(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	var n int
	for _, c := range strings.TrimSpace(line[1:]) {
		n = n*10 + int(c-'0')
	}
	name := ""
	for i := 0; i < n; i++ {
		if _, err := br.ReadString('\n'); err != nil { // $len
			return "", err
		}
		arg, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		if i == 0 {
			name = strings.ToUpper(strings.TrimSpace(arg))
		}
	}
	return name, nil
}

// windowCLI runs benchrig with the tests' short phases and a generous
// guard against a hang (the only bound the test sets), and returns the
// one sample's load window.
func windowCLI(t *testing.T, args ...string) (seconds float64, outstanding, oldestUS int64, reasons []string, wall time.Duration) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "w.json")
	// No warm-up: the server stops answering inside the recorded window.
	// A short request timeout: the post-check after the window waits one.
	args = append(args, "-c", "4", "-d", "1s", "--warmup", "0s", "--timeout", "2s", "--sample-interval", "100ms", "--no-calibrate", "-o", out)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	var stderr strings.Builder
	err := run(ctx, args, io.Discard, &stderr)
	wall = time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("benchrig %s ran into the test's 2 min guard: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if _, serr := os.Stat(out); serr != nil {
		t.Fatalf("benchrig %s wrote no results file (%v): %v\n%s", strings.Join(args, " "), serr, err, stderr.String())
	}
	d := readResults(t, out)
	if len(d.Samples) != 1 || d.Samples[0].Load == nil {
		t.Fatalf("want one sample with a load window: %v\n%s", err, stderr.String())
	}
	l := d.Samples[0].Load
	return l.Seconds, l.OutstandingAtEnd, l.OutstandingOldestUS, d.Samples[0].Verdict.Reasons, wall
}

// A server that stops answering mid-run: the recorded window is what -d
// says, the requests still outstanding at its end are counted as such, and
// their age makes the sample UNHEALTHY (issue 26, item 4). In the closed
// loop (event loops for HTTP and PostgreSQL, a goroutine per connection
// for RESP) and at a rate (a goroutine per connection).
func TestWindowEndsOnTimeAgainstStallingServers(t *testing.T) {
	httpServer := func(t *testing.T) string {
		return stallingServer(t, readHTTP, func(string) string { return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" })
	}
	respServer := func(t *testing.T) string {
		return stallingServer(t, readRESP, func(cmd string) string {
			if cmd == "PING" {
				return "+PONG\r\n"
			}
			return "$2\r\nok\r\n"
		})
	}
	srv, pgErr := pgWindowServer(t)
	type tcase struct {
		name string
		args func(t *testing.T) []string
	}
	cases := []tcase{
		{"http", func(t *testing.T) []string { return []string{"http", "http://" + httpServer(t) + "/"} }},
		{"resp", func(t *testing.T) []string { return []string{"resp", "--addr", respServer(t), "--command", "GET"} }},
		{"pg", func(t *testing.T) []string {
			if pgErr != nil {
				pgSkip(t, pgErr)
			}
			p, err := pgtest.Start(srv.DSN(), pgtest.MidRunStall, pgtest.Options{After: stallAfter})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			return []string{"pg", "--dsn", p.DSN(), "--baseline", "0s", "--settle", "0s", "--recovery", "0s"}
		}},
	}
	for _, tc := range cases {
		for _, mode := range []struct {
			name  string
			extra []string
		}{{"closed", nil}, {"rate", []string{"-R", "200"}}} {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				t.Parallel()
				args := append(tc.args(t), mode.extra...)
				secs, outstanding, oldest, reasons, wall := windowCLI(t, args...)
				if secs != 1 {
					t.Errorf("the recorded window lasted %v s, want the 1 s of -d", secs)
				}
				if outstanding <= 0 {
					t.Errorf("outstanding_at_end %d, want > 0 against a server that stopped answering", outstanding)
				}
				if !strings.Contains(strings.Join(reasons, "; "), "outstanding at the window's end") {
					t.Errorf("verdict %q does not name the outstanding requests", reasons)
				}
				t.Logf("window %v s, %d outstanding at its end (oldest %d µs), wall %s; %q", secs, outstanding, oldest, wall.Round(time.Millisecond), reasons)
			})
		}
	}
}

// pgWindowServer starts an ephemeral server with the demo table, stopped
// when t ends; nil (the pg cases skip) without PostgreSQL binaries.
func pgWindowServer(t *testing.T) (*pgephemeral.Server, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, err := pgephemeral.StartEphemeral(ctx, pgephemeral.Options{MaxConnections: 40})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	conn, err := pgclient.Connect(ctx, s.DSN())
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	return s, pgclient.CreateDataset(ctx, conn, pgclient.Dataset{})
}
