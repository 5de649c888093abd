// Package bucketserver is an HTTP server with a known capacity, the
// target of capacity's tests: it answers 200 "ok" to the requests a token
// bucket of N per second admits and 503 to every other, counting both.
//
// The bucket holds Burst tokens at most (N/20, at least 1), starts full
// and is refilled continuously, N tokens a second, from the monotonic
// clock; a request takes one token or is refused. Offered a constant
// rate above N it accepts N a second (plus the burst once); below N it
// refuses none, as long as arrivals do not bunch beyond the burst.
package bucketserver

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Bucket is the http.Handler: a token bucket of PerSecond tokens a
// second holding Burst at most.
type Bucket struct {
	// Accepted counts the requests answered 200.
	Accepted atomic.Int64
	// Refused counts the requests answered 503.
	Refused atomic.Int64

	perSecond, burst float64
	now              func() time.Time

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

// NewBucket returns a full bucket of perSecond tokens a second (> 0 and
// finite) with a burst of perSecond/20, at least 1.
func NewBucket(perSecond float64) (*Bucket, error) {
	return newBucket(perSecond, time.Now)
}

// newBucket is NewBucket with its clock.
func newBucket(perSecond float64, now func() time.Time) (*Bucket, error) {
	if !(perSecond > 0) || math.IsInf(perSecond, 0) {
		return nil, fmt.Errorf("bucketserver: %v requests/s: accepted a finite rate above 0", perSecond)
	}
	burst := math.Max(1, perSecond/20)
	return &Bucket{perSecond: perSecond, burst: burst, now: now, tokens: burst, last: now()}, nil
}

// PerSecond is the bucket's rate, requests per second.
func (b *Bucket) PerSecond() float64 { return b.perSecond }

// Burst is the most tokens the bucket holds.
func (b *Bucket) Burst() float64 { return b.burst }

// Take takes a token if there is one, refilling first from the time
// since the last call (time.Time's monotonic reading).
func (b *Bucket) Take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if d := now.Sub(b.last); d > 0 {
		b.tokens = math.Min(b.burst, b.tokens+d.Seconds()*b.perSecond)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true
	}
	return false
}

// ServeHTTP answers 200 "ok" when the bucket has a token, else 503, and
// counts the answer.
func (b *Bucket) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	if b.Take() {
		b.Accepted.Add(1)
		w.Write([]byte("ok"))
		return
	}
	b.Refused.Add(1)
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write([]byte("over capacity"))
}

// Server is a Bucket served over HTTP on a 127.0.0.1 listener.
type Server struct {
	// Bucket is the handler, with its counters.
	*Bucket
	// Addr is the listener's address, host:port.
	Addr string

	srv      *http.Server
	done     chan error
	once     sync.Once
	closeErr error
}

// Start serves a Bucket of perSecond requests a second on addr, a
// 127.0.0.1 address ("127.0.0.1:0" or "" for any free port), and returns
// the server with the address it listens on.
func Start(addr string, perSecond float64) (*Server, error) {
	b, err := NewBucket(perSecond)
	if err != nil {
		return nil, err
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("bucketserver: address %q: %w", addr, err)
	}
	if host != "127.0.0.1" {
		return nil, fmt.Errorf("bucketserver: address %q: accepted 127.0.0.1:port only", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("bucketserver: %w", err)
	}
	s := &Server{Bucket: b, Addr: ln.Addr().String(), done: make(chan error, 1),
		srv: &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// URL is the server's base URL, "http://127.0.0.1:port/".
func (s *Server) URL() string { return "http://" + s.Addr + "/" }

// Close stops the server: the listener and every connection. A second
// Close returns what the first did.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.closeErr = s.srv.Close()
		if err := <-s.done; err != nil && !errors.Is(err, http.ErrServerClosed) && s.closeErr == nil {
			s.closeErr = err
		}
	})
	return s.closeErr
}
