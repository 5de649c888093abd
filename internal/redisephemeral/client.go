package redisephemeral

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/benchrig/benchrig/internal/resp"
)

// defaultAdminTimeout bounds an administrative exchange when ctx has no
// deadline.
const defaultAdminTimeout = 5 * time.Second

// adminConn is a short-lived connection for probes, INFO and setup commands;
// it is not on any hot path.
type adminConn struct {
	ctx  context.Context
	nc   net.Conn
	rd   *resp.Reader
	buf  []byte
	stop func() bool // ends the watch of ctx
}

// dialAdmin connects to the server and authenticates.
func (s *Server) dialAdmin(ctx context.Context) (*adminConn, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(defaultAdminTimeout)
	}
	d := net.Dialer{Deadline: deadline}
	nc, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return nil, err
	}
	if s.opts.TLSCertFile != "" {
		// Our own server on loopback: its certificate is whatever the
		// caller gave, possibly for another name, so only encryption is
		// wanted here.
		tc := tls.Client(nc, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec // own loopback server
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		nc = tc
	}
	nc.SetDeadline(deadline)
	c := &adminConn{ctx: ctx, nc: nc, rd: resp.NewReader(nc, resp.Limits{})}
	// Ctrl-C (ctx canceled) interrupts a read from a silent server at once,
	// rather than after the deadline.
	c.stop = context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	if !s.password.IsZero() {
		if _, err := c.do("AUTH", s.password.Reveal()); err != nil {
			c.close()
			return nil, fmt.Errorf("AUTH: %w", err)
		}
	}
	return c, nil
}

// do sends one command and returns its reply as text (see
// resp.Reader.ReadText); a server error is a *resp.Error.
func (c *adminConn) do(args ...string) (string, error) {
	c.buf = resp.AppendCommandString(c.buf[:0], args...)
	if _, err := c.nc.Write(c.buf); err != nil {
		return "", c.cause(err)
	}
	out, err := c.rd.ReadText()
	return out, c.cause(err)
}

// cause returns ctx's error for an exchange cut short by it.
func (c *adminConn) cause(err error) error {
	if err != nil && c.ctx.Err() != nil {
		return c.ctx.Err()
	}
	return err
}

func (c *adminConn) close() {
	c.stop()
	c.nc.Close()
}

// Do runs one command on a fresh authenticated connection and returns its
// reply as text (simple or bulk string, integer in decimal, "" for nil). It is
// for setup and reset between samples (SET, FLUSHALL, CONFIG SET), not for
// load. A server error reply is returned as a *resp.Error.
func (s *Server) Do(ctx context.Context, args ...string) (string, error) {
	if len(args) == 0 {
		return "", errors.New("redis: Do: no command")
	}
	c, err := s.dialAdmin(ctx)
	if err != nil {
		return "", fmt.Errorf("redis: connect to %s: %w", s.addr, err)
	}
	defer c.close()
	out, err := c.do(args...)
	if err != nil {
		return "", fmt.Errorf("redis: %s: %w", args[0], err)
	}
	return out, nil
}

// ping checks that the server answers PING with PONG.
func (s *Server) ping(ctx context.Context) error {
	c, err := s.dialAdmin(ctx)
	if err != nil {
		return err
	}
	defer c.close()
	out, err := c.do("PING")
	if err != nil {
		return err
	}
	if out != "PONG" {
		return fmt.Errorf("PING answered %q, want PONG", out)
	}
	return nil
}
