package grpcephemeral

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
)

// Options configures a server. The zero value serves cleartext HTTP/2 (h2c)
// on a free port of 127.0.0.1 with grpc-go's defaults.
type Options struct {
	// Addr is the address to listen on; empty means "127.0.0.1:0", a free
	// loopback port (see Server.Addr).
	Addr string
	// TLS serves TLS with a self-signed ECDSA P-256 certificate for
	// 127.0.0.1 and localhost, made in-process (ALPN h2); clients trust
	// Server.CACertPEM.
	TLS bool
	// MaxConcurrentStreams limits the streams of one connection; 0 keeps
	// grpc-go's default.
	MaxConcurrentStreams uint32
	// Reflection registers grpc-go's server reflection service (v1 and
	// v1alpha), answering from greeter.proto's compiled descriptors: it
	// lists benchrig.test.v1.Greeter and describes every method declared,
	// Missing included.
	Reflection bool
	// Gzip accepts gzip-compressed requests and answers them gzip-compressed
	// (grpc-go answers in the compression it was asked in). The gzip
	// compressor is registered process-wide (this package imports
	// google.golang.org/grpc/encoding/gzip), so without Gzip the server
	// refuses a gzip-compressed call itself, with UNIMPLEMENTED, as a server
	// without the compressor would.
	Gzip bool
}

// closeGrace bounds Close's graceful stop before it cuts the calls left.
const closeGrace = 2 * time.Second

// Server is a running grpc-go server. Close stops it.
type Server struct {
	opts      Options
	grpc      *grpc.Server
	ln        net.Listener
	certPEM   []byte
	calls     map[string]*atomic.Int64 // by method name; fixed after Start
	messages  atomic.Int64
	served    chan struct{} // closed when Serve has returned
	closeOnce sync.Once
}

// Start starts a server on opts.Addr (by default a free port of 127.0.0.1)
// and returns once it listens: connections from then on are served. Close
// stops it.
func Start(opts Options) (*Server, error) {
	fd, err := compiled()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, served: make(chan struct{})}
	desc, err := s.serviceDesc(fd)
	if err != nil {
		return nil, err
	}
	sopts := []grpc.ServerOption{grpc.WaitForHandlers(true)}
	if opts.TLS {
		certPEM, cfg, err := selfSigned()
		if err != nil {
			return nil, err
		}
		s.certPEM = certPEM
		sopts = append(sopts, grpc.Creds(credentials.NewTLS(cfg)))
	}
	if opts.MaxConcurrentStreams > 0 {
		sopts = append(sopts, grpc.MaxConcurrentStreams(opts.MaxConcurrentStreams))
	}
	var res descriptorResolver
	if opts.Reflection {
		if res, err = newDescriptorResolver(fd); err != nil {
			return nil, err
		}
	}
	s.grpc = grpc.NewServer(sopts...)
	s.grpc.RegisterService(desc, s)
	if opts.Reflection {
		ro := reflection.ServerOptions{Services: s.grpc, DescriptorResolver: res}
		grpc_reflection_v1.RegisterServerReflectionServer(s.grpc, reflection.NewServerV1(ro))
		// v1alpha too, for the clients that only know it.
		grpc_reflection_v1alpha.RegisterServerReflectionServer(s.grpc, reflection.NewServer(ro))
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	s.ln, err = net.Listen("tcp", addr)
	if err != nil {
		s.grpc.Stop()
		return nil, fmt.Errorf("grpcephemeral: listen on %s: %w", addr, err)
	}
	go func() {
		defer close(s.served)
		_ = s.grpc.Serve(s.ln) // nil after a stop; else the listener failed, and Close still stops
	}()
	return s, nil
}

// StartT starts a server for a test, which fails at once if the server
// cannot start; the test's cleanup closes it.
func StartT(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Close stops the server: a graceful stop (no new calls; those running
// finish) bounded by 2 s, then a hard stop that cancels the calls left. It
// returns when the server and every handler have returned. It is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			s.grpc.GracefulStop()
		}()
		grace := time.NewTimer(closeGrace)
		defer grace.Stop()
		select {
		case <-stopped:
		case <-grace.C:
			s.grpc.Stop()
			<-stopped
		}
		<-s.served
	})
}

// Addr returns the address the server listens on, e.g. "127.0.0.1:40123".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// TLS reports whether the server speaks TLS.
func (s *Server) TLS() bool { return s.opts.TLS }

// CACertPEM returns the server's self-signed certificate as PEM, for
// clients to trust as a root; nil without TLS.
func (s *Server) CACertPEM() []byte { return s.certPEM }

// CACertFile writes CACertPEM into dir as ca.pem and returns its path.
func (s *Server) CACertFile(dir string) (string, error) {
	if s.certPEM == nil {
		return "", errors.New("grpcephemeral: the server does not speak TLS: no certificate")
	}
	path := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(path, s.certPEM, 0o644); err != nil {
		return "", fmt.Errorf("grpcephemeral: write ca.pem: %w", err)
	}
	return path, nil
}

// Calls returns how many calls of each method ("SayHello", "Fail", …) the
// server has handled, counted as each handler starts; methods not called are
// left out. Calls grpc-go answers by itself (Missing, an unknown method) and
// gzip calls refused without Options.Gzip are not counted.
func (s *Server) Calls() map[string]int64 {
	out := make(map[string]int64)
	for name, n := range s.calls {
		if v := n.Load(); v > 0 {
			out[name] = v
		}
	}
	return out
}

// Messages returns how many request messages the server has received in all
// calls: one per unary or server-streaming call, one per message sent for
// the client-streaming and bidirectional ones.
func (s *Server) Messages() int64 { return s.messages.Load() }
