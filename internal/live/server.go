// Package live serves a page that shows a benchmark while it runs: the
// plan's progress and ETA, the sample in flight over time with its phase
// bands, and the finished samples with their verdicts, then, once the run
// is over, the report of its results file.
//
// The charts and tables are the report's own (internal/report), drawn by
// one goroutine at most once per second and sent to each page as ready
// HTML over server-sent events. The run feeds the server with calls that
// only take a lock and append: they never wait for the renderer or a
// browser. Each page holds at most the latest update; one that does not
// read is dropped after a write deadline. The server is read-only (GET
// and HEAD), bounded in pages and connections, and answers only on
// loopback unless given or generating a token.
package live

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a live server.
type Options struct {
	// Addr is the address to listen on: "" is 127.0.0.1 on a free port.
	// Any address that is not loopback requires a token.
	Addr string
	// Token is the secret a page must carry (?token=…) when Addr is not
	// loopback; "" there generates one. The caller reads a given one from
	// the environment (--ui-token-env), never from the command line. It
	// must be at least 16 characters.
	Token string
	// Title names the run on the page (the suite's name).
	Title string
	// MaxClients bounds the pages open at once (0: 16); more are
	// answered 503.
	MaxClients int
	// WriteTimeout is how long one update to a page may take to write
	// before the page is dropped (0: 10 s).
	WriteTimeout time.Duration
}

// minToken is the shortest token accepted.
const minToken = 16

// Server is a running live page. Its feeding methods (SetPlan,
// SampleStarted, Tick, SampleFinished, Finished) are safe to call from
// any goroutine and never wait for a page.
type Server struct {
	opts   Options
	url    string
	token  []byte // sha256 of the token; nil on loopback without one
	ln     net.Listener
	srv    *http.Server
	done   chan struct{}
	closed sync.Once
	wg     sync.WaitGroup

	mu   sync.Mutex
	st   state
	wake chan struct{}

	seq uint64 // the last frame's id; the renderer's alone

	// The renderer's output, read by the handlers.
	out     sync.Mutex
	latest  *frame
	page    []byte
	clients map[*client]struct{}
	nconn   atomic.Int64 // open event streams
}

// Start listens on opts.Addr and serves the live page until Close.
func Start(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.MaxClients <= 0 {
		opts.MaxClients = 16
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 10 * time.Second
	}
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("live page address %q: %w", opts.Addr, err)
	}
	loopback := isLoopback(host)
	if opts.Token != "" && len(opts.Token) < minToken {
		return nil, fmt.Errorf("live page token: at least %d characters, got %d", minToken, len(opts.Token))
	}
	if !loopback && opts.Token == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("live page token: %w", err)
		}
		opts.Token = hex.EncodeToString(b)
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("live page: %w", err)
	}
	s := &Server{opts: opts, done: make(chan struct{}), wake: make(chan struct{}, 1), clients: map[*client]struct{}{},
		ln: limitListener(ln, 4*opts.MaxClients+8)}
	s.st.title, s.st.started, s.st.took = opts.Title, time.Now(), map[string]time.Duration{}
	if opts.Token != "" {
		sum := sha256.Sum256([]byte(opts.Token))
		s.token = sum[:]
	}
	s.url = pageURL(host, ln.Addr().(*net.TCPAddr).Port, loopback, opts.Token)
	s.publish(s.render(s.snapshot()))
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 8 << 10,
		ErrorLog: log.New(io.Discard, "", 0)} // the run's terminal is not the server's
	s.wg.Add(2)
	go func() { defer s.wg.Done(); _ = s.srv.Serve(s.ln) }()
	go func() { defer s.wg.Done(); s.renderLoop() }()
	return s, nil
}

// isLoopback reports whether host names only this machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// pageURL is the URL to print: the listening port on the host given
// (this machine's name when all interfaces listen), with the token.
func pageURL(host string, port int, loopback bool, token string) string {
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
		if h, err := os.Hostname(); err == nil && h != "" && !loopback {
			host = h
		}
	}
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, fmt.Sprint(port)), Path: "/"}
	if token != "" {
		u.RawQuery = url.Values{"token": {token}}.Encode()
	}
	return u.String()
}

// URL is the page's address to print, with its token when it has one.
func (s *Server) URL() string { return s.url }

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Clients is the number of pages open (event streams connected).
func (s *Server) Clients() int { return int(s.nconn.Load()) }

// Close stops the server: open pages are cut and the renderer ends. It
// may be called more than once.
func (s *Server) Close() error {
	var err error
	s.closed.Do(func() {
		close(s.done)
		err = s.srv.Close()
		s.wg.Wait()
	})
	return err
}

// ServeHTTP answers GET and HEAD of the page (/) and of its event stream
// (/events), for the token when there is one.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !s.allowed(r) {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	switch r.URL.Path {
	case "/":
		s.servePage(w, r)
	case "/events":
		s.serveEvents(w, r)
	default:
		http.NotFound(w, r)
	}
}

// allowed checks the token, in constant time, on every request; without
// a token (loopback) it checks that the request names this machine, so
// that a web page elsewhere cannot read it through a rebound DNS name.
func (s *Server) allowed(r *http.Request) bool {
	if s.token == nil {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		return isLoopback(host)
	}
	got := sha256.Sum256([]byte(r.URL.Query().Get("token")))
	return subtle.ConstantTimeCompare(got[:], s.token) == 1
}

// servePage writes the latest page: the live page, or the final report.
func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	s.out.Lock()
	page := s.page
	s.out.Unlock()
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("Content-Length", fmt.Sprint(len(page)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(page)
}

// limitListener closes connections beyond n open at once as soon as they
// are accepted, and bounds the kernel's send buffer of each: a flood of
// connections costs an accept and a close each.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limited{Listener: ln, max: int64(n)}
}

type limited struct {
	net.Listener
	max  int64
	open atomic.Int64
}

func (l *limited) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			c.Close()
			continue
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetWriteBuffer(128 << 10)
		}
		return &countedConn{Conn: c, l: l}, nil
	}
}

type countedConn struct {
	net.Conn
	l    *limited
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}
