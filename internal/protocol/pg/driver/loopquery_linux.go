//go:build linux

package pg

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// PlanStats implements Backends: planQuery on each open connection in
// turn, through its hijacked socket, outside any Run.
func (l *loop) PlanStats(ctx context.Context) (Plans, error) {
	var sum Plans
	for _, c := range l.conns {
		if c.St != evloop.Open || c.Inflight > 0 {
			continue
		}
		rows, err := l.simpleQuery(ctx, c, planQuery)
		if err != nil {
			return Plans{}, fmt.Errorf("pg: connection %d: read pg_prepared_statements: %w", c.I+1, err)
		}
		mode, counts, err := parsePlans(rows)
		if err != nil {
			return Plans{}, err
		}
		sum.Add(c.c.planDelta(mode, counts))
	}
	return sum, nil
}

// simpleQuery runs one statement in the simple protocol on idle c and
// returns its rows' text values (nil for NULL), waiting for c's socket in
// poll(2) until ReadyForQuery, ctx's deadline or queryTimeout. The
// statement prepares nothing, so it leaves the plan counts alone. On an
// error the connection is dropped (its state is unknown), to be reopened
// by the next Run.
func (l *loop) simpleQuery(ctx context.Context, c *lconn, sql string) ([][][]byte, error) {
	rows, err := l.doSimpleQuery(ctx, c, sql)
	if err != nil {
		l.drop(c)
	}
	return rows, err
}

// queryTimeout bounds one simpleQuery when ctx has no earlier deadline.
const queryTimeout = 10 * time.Second

func (l *loop) doSimpleQuery(ctx context.Context, c *lconn, sql string) ([][][]byte, error) {
	deadline := time.Now().Add(queryTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	q := append(c.wbuf[:0], 'Q', 0, 0, 0, 0)
	q = append(q, sql...)
	q = append(q, 0)
	binary.BigEndian.PutUint32(q[1:], uint32(len(q)-1))
	c.wbuf = q
	for len(q) > 0 {
		n, err := unix.Write(c.Fd, q)
		switch {
		case err == unix.EAGAIN:
			if err := waitFd(ctx, c.Fd, unix.POLLOUT, deadline); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, err
		default:
			q = q[n:]
		}
	}
	var rows [][][]byte
	var srvErr string
	for {
		// A server that keeps sending (notices without end) must not
		// outlast the deadline either.
		if time.Now().After(deadline) {
			return nil, errors.New("no answer from the server in time")
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Whole messages first: a previous read may hold several.
		for len(c.rbuf) >= 5 {
			ml := int(binary.BigEndian.Uint32(c.rbuf[1:]))
			if ml < 4 {
				return nil, errors.New("malformed message from server")
			}
			if int64(ml) > l.d.cfg.MaxMessage {
				return nil, errors.New(tooLong(c.rbuf[0], ml, l.d.cfg.MaxMessage))
			}
			if len(c.rbuf) < 1+ml {
				break
			}
			typ, body := c.rbuf[0], c.rbuf[5:1+ml]
			switch typ {
			case 'D':
				r, ok := textRow(body)
				if !ok {
					return nil, errors.New("malformed message from server")
				}
				rows = append(rows, r)
			case 'E':
				if srvErr == "" {
					srvErr = errorResponse(body)
				}
			}
			c.rbuf = c.rbuf[:copy(c.rbuf, c.rbuf[1+ml:])]
			if typ == 'Z' {
				if srvErr != "" {
					return nil, errors.New(srvErr)
				}
				return rows, nil
			}
		}
		if cap(c.rbuf)-len(c.rbuf) < 4096 {
			nb := make([]byte, len(c.rbuf), max(2*cap(c.rbuf), 16384))
			copy(nb, c.rbuf)
			c.rbuf = nb
		}
		m := len(c.rbuf)
		n, err := evloop.ReadNonblock(c.Fd, c.rbuf[m:cap(c.rbuf)])
		switch {
		case err == unix.EAGAIN:
			if err := waitFd(ctx, c.Fd, unix.POLLIN, deadline); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, err
		case n == 0:
			return nil, errors.New("connection closed by server")
		default:
			c.rbuf = c.rbuf[:m+n]
		}
	}
}

// textRow copies a DataRow's values (nil for NULL).
func textRow(body []byte) ([][]byte, bool) {
	if len(body) < 2 {
		return nil, false
	}
	n := int(binary.BigEndian.Uint16(body))
	p := 2
	out := make([][]byte, n)
	for i := range out {
		if len(body)-p < 4 {
			return nil, false
		}
		m := int(int32(binary.BigEndian.Uint32(body[p:])))
		p += 4
		if m < 0 {
			continue
		}
		if len(body)-p < m {
			return nil, false
		}
		out[i] = append([]byte{}, body[p:p+m]...)
		p += m
	}
	return out, true
}

// waitFd waits in poll(2) until fd is ready for events, in slices of at
// most 100 ms so that ctx is honoured.
func waitFd(ctx context.Context, fd int, events int16, deadline time.Time) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return errors.New("no answer from the server in time")
		}
		ms := int(min(left, 100*time.Millisecond) / time.Millisecond)
		fds := []unix.PollFd{{Fd: int32(fd), Events: events}}
		n, err := unix.Poll(fds, max(ms, 1))
		if err != nil && err != unix.EINTR {
			return err
		}
		if n > 0 {
			return nil
		}
	}
}
