package respserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	wire "github.com/benchrig/benchrig/internal/resp"
	"github.com/benchrig/benchrig/internal/secret"
)

// wrap names the server and the command in an error, redacting the token
// and pointing at the likely cause of the common failures.
func (s *RedisServer) wrap(what string, err error) error {
	err = s.redactErr(err)
	var se *wire.Error
	switch {
	case errors.As(err, &se) && se.Prefix() == "NOAUTH":
		return fmt.Errorf("redis at %s: %s refused: %w (the server requires AUTH: give a token)", s.addr, what, err)
	case errors.Is(err, wire.ErrProtocol) || errors.Is(err, wire.ErrLimit):
		return fmt.Errorf("redis at %s: %s: the peer does not speak RESP: %w", s.addr, what, err)
	case errors.Is(err, net.ErrClosed):
		// only the close on Ctrl-C (dial's AfterFunc) closes it mid-exchange
		return fmt.Errorf("redis at %s: %s: %w", s.addr, what, context.Canceled)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("redis at %s: %s: no reply within %s (the shortest request timeout of the run's paths, at most %s): a silent server, or not a RESP server", s.addr, what, s.adminLimit(), redisAdminTimeout)
	case errors.Is(err, io.EOF) && s.tlsConf == nil:
		return fmt.Errorf("redis at %s: %s: connection closed before a reply (a TLS-only port? then use TLS): %w", s.addr, what, err)
	}
	return fmt.Errorf("redis at %s: %s: %w", s.addr, what, err)
}

// redactErr removes the token from an error's text (secret.Scrub), and
// then the error's chain, which could show it again.
func (s *RedisServer) redactErr(err error) error {
	if err == nil || s.token.IsZero() {
		return err
	}
	if msg := secret.Scrub(err.Error(), s.token.Reveal()); msg != err.Error() {
		return errors.New(msg)
	}
	return err
}

// redisAdmin is a short-lived connection for setup, INFO and checks; it is
// on no hot path.
type redisAdmin struct {
	nc    net.Conn
	rd    *wire.Reader
	buf   []byte
	limit time.Duration // one exchange's bound
	stop  func() bool   // ends the close-on-cancel
}

// redisAdminTimeout bounds one administrative exchange when no path of
// the run sets a shorter request timeout.
const redisAdminTimeout = 10 * time.Second

// adminLimit is the bound of one administrative exchange: the shortest
// request timeout of the run's paths (a server too slow for the load is too
// slow for its checks), at most redisAdminTimeout.
func (s *RedisServer) adminLimit() time.Duration {
	if t := s.opts.AdminTimeout; t > 0 && t < redisAdminTimeout {
		return t
	}
	return redisAdminTimeout
}

// dial connects, completes TLS and AUTH. The connection closes when ctx
// ends (Ctrl-C), so no exchange outlives it.
func (s *RedisServer) dial(ctx context.Context) (*redisAdmin, error) {
	var d net.Dialer
	limit := s.adminLimit()
	dctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	nc, err := d.DialContext(dctx, "tcp", s.addr)
	if err != nil {
		return nil, fmt.Errorf("redis at %s: %w", s.addr, err)
	}
	if s.tlsConf != nil {
		tc := tls.Client(nc, s.tlsConf)
		if err := tc.HandshakeContext(dctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("redis at %s: TLS handshake: %w", s.addr, err)
		}
		nc = tc
	}
	c := &redisAdmin{nc: nc, rd: wire.NewReader(nc, wire.Limits{}), limit: limit}
	c.stop = context.AfterFunc(ctx, func() { nc.Close() })
	c.extend(ctx)
	if !s.token.IsZero() {
		args := []string{"AUTH", s.token.Reveal()}
		if s.opts.User != "" {
			args = []string{"AUTH", s.opts.User, s.token.Reveal()}
		}
		_, err := c.do(args...)
		clear(c.buf)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("redis at %s: AUTH failed: %w", s.addr, s.redactErr(err))
		}
	}
	return c, nil
}

// extend sets the connection's deadline: ctx's, or the exchange's bound.
func (c *redisAdmin) extend(ctx context.Context) {
	dl, ok := ctx.Deadline()
	if limit := time.Now().Add(c.limit); !ok || dl.After(limit) {
		dl = limit
	}
	c.nc.SetDeadline(dl)
}

func (c *redisAdmin) close() {
	if c.stop != nil {
		c.stop()
	}
	c.nc.Close()
}

// do sends one command and returns its reply as text (see
// wire.Reader.ReadText); a server error is a *wire.Error.
func (c *redisAdmin) do(args ...string) (string, error) {
	c.buf = wire.AppendCommandString(c.buf[:0], args...)
	if _, err := c.nc.Write(c.buf); err != nil {
		return "", err
	}
	return c.rd.ReadText()
}

// pipeline writes c.buf (n commands) and reads n replies, each of which
// must be the simple string want.
func (c *redisAdmin) pipeline(n int, want string) error {
	if _, err := c.nc.Write(c.buf); err != nil {
		return err
	}
	var first error
	for i := 0; i < n; i++ {
		rep, err := c.rd.ReadReply()
		if err != nil {
			return err
		}
		switch {
		case rep.Kind == wire.KindError:
			if first == nil {
				first = rep.Err()
			}
		case rep.Kind != wire.KindSimple || string(rep.Data) != want:
			for c.rd.Depth() > 0 {
				if err := c.rd.Skip(); err != nil {
					return err
				}
			}
			if first == nil {
				first = fmt.Errorf("reply %d: want +%s, got a %s reply", i+1, want, rep.Kind)
			}
		}
	}
	return first
}

// mget runs one MGET and copies the values out.
func (c *redisAdmin) mget(keys []string) ([][]byte, error) {
	c.buf = wire.AppendArrayHeader(c.buf[:0], 1+len(keys))
	c.buf = wire.AppendBulkString(c.buf, "MGET")
	for _, k := range keys {
		c.buf = wire.AppendBulkString(c.buf, k)
	}
	if _, err := c.nc.Write(c.buf); err != nil {
		return nil, err
	}
	hdr, err := c.rd.ReadReply()
	switch {
	case err != nil:
		return nil, err
	case hdr.Kind == wire.KindError:
		return nil, hdr.Err()
	case hdr.Kind != wire.KindArray || hdr.Nil || hdr.Len != len(keys):
		return nil, fmt.Errorf("want an array of %d values, got a %s reply of %d", len(keys), hdr.Kind, hdr.Len)
	}
	out := make([][]byte, len(keys))
	for i := range keys {
		v, err := c.rd.ReadReply()
		if err != nil {
			return nil, err
		}
		if v.Kind != wire.KindBulk {
			return nil, fmt.Errorf("element %d: want a bulk string, got a %s reply", i+1, v.Kind)
		}
		if !v.Nil {
			out[i] = append([]byte{}, v.Data...)
		}
	}
	return out, nil
}
