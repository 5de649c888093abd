package resptest

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"github.com/benchrig/benchrig/internal/resp"
)

// Action tells the server what to do with a command; a Hook returns one.
type Action int

// Actions a Hook may return.
const (
	// Serve answers the command normally.
	Serve Action = iota
	// CloseMidReply writes the first half of the command's reply (after any
	// replies still pending from a pipeline), then closes the connection.
	CloseMidReply
	// CloseConn closes the connection without answering the command.
	CloseConn
)

// Options configures a Server. The zero value serves plain TCP without a
// password.
type Options struct {
	// Password, when not empty, is required by AUTH before any other
	// command, as redis's requirepass does.
	Password string
	// TLS serves TLS with a self-signed certificate generated at Start; see
	// Server.CertPEM.
	TLS bool
	// Hook, when set, is called with every command before it is served
	// (the arguments are valid only during the call) and may make the
	// server misbehave. It is called from connection goroutines
	// concurrently.
	Hook func(args [][]byte) Action
	// Limits bounds the commands the server accepts.
	Limits resp.Limits
	// MaxMGETKeys, when > 0, refuses an MGET of more keys with "ERR
	// response exceeds limit", as real servers that bound their request or
	// reply sizes do.
	MaxMGETKeys int
}

// Server is a running test server. Close stops it.
type Server struct {
	opts     Options
	ln       net.Listener
	certPEM  []byte
	commands atomic.Int64

	mu     sync.Mutex
	data   map[string][]byte
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Start listens on 127.0.0.1 on a free port and serves in the background.
func Start(opts Options) (*Server, error) {
	s := &Server{
		opts:  opts,
		data:  make(map[string][]byte),
		conns: make(map[net.Conn]struct{}),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("resptest: listen on 127.0.0.1: %w", err)
	}
	return s.start(ln)
}

// StartOn serves on a listener the caller opened (a port of its choice,
// SO_REUSEPORT), in the background, until Close. TLS is not offered here.
func StartOn(ln net.Listener, opts Options) (*Server, error) {
	opts.TLS = false
	s := &Server{opts: opts, data: make(map[string][]byte), conns: make(map[net.Conn]struct{})}
	return s.start(ln)
}

// start serves on ln.
func (s *Server) start(ln net.Listener) (*Server, error) {
	opts := s.opts
	if opts.TLS {
		cert, certPEM, err := selfSigned()
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("resptest: %w", err)
		}
		s.certPEM = certPEM
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	s.ln = ln
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr returns the address the server listens on ("127.0.0.1:port").
func (s *Server) Addr() string { return s.ln.Addr().String() }

// CertPEM returns the server's self-signed certificate in PEM (nil without
// TLS); write it to a file to use it as a client's CA file.
func (s *Server) CertPEM() []byte { return s.certPEM }

// Commands returns the number of commands received so far, on all
// connections.
func (s *Server) Commands() int64 { return s.commands.Load() }

// Set stores a value under key.
func (s *Server) Set(key string, val []byte) {
	s.mu.Lock()
	s.data[key] = append([]byte(nil), val...)
	s.mu.Unlock()
}

// Close stops listening, closes every connection and waits for the
// server's goroutines to end. It is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	err := s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// accept accepts connections until the listener is closed.
func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

// serve answers the commands of one connection, batching the replies of
// pipelined commands into one write.
func (s *Server) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	rd := resp.NewReader(c, s.opts.Limits)
	st := &connState{authed: s.opts.Password == ""}
	var args [][]byte
	var out []byte
	for {
		var err error
		args, err = rd.ReadCommand(args)
		if err != nil {
			if !errors.Is(err, io.EOF) && errors.Is(err, resp.ErrProtocol) {
				out = resp.AppendError(out, "ERR Protocol error")
				c.Write(out)
			}
			return
		}
		if len(args) == 0 {
			continue
		}
		s.commands.Add(1)
		action := Serve
		if s.opts.Hook != nil {
			action = s.opts.Hook(args)
		}
		switch action {
		case CloseConn:
			c.Write(out)
			return
		case CloseMidReply:
			n := len(out)
			out, _ = s.exec(st, args, out)
			c.Write(out[:n+(len(out)-n)/2])
			return
		}
		var quit bool
		out, quit = s.exec(st, args, out)
		if quit || rd.Buffered() == 0 {
			if _, err := c.Write(out); err != nil || quit {
				return
			}
			out = out[:0]
		}
	}
}
