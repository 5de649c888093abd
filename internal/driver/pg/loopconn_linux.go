//go:build linux

package pg

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
	"github.com/benchrig/benchrig/internal/workload"
)

// connState is where a loop connection stands.
type connState uint8

const (
	csDown    connState = iota // no socket
	csOpen                     // connected, statements prepared
	csBackoff                  // failed: reopened at until
)

// lconn is one connection of a loop: a Conn whose statements, parameter
// encoders, row decoder and row buffers the loop reuses, and its socket,
// taken over from pgx.
type lconn struct {
	i       int
	c       *Conn
	nc      net.Conn // the hijacked socket, kept referenced until closed
	fd      int
	pid     uint32 // the backend's process ID
	gen     uint32 // bumped per socket, carried in its epoll events
	st      connState
	until   int64 // reopen time (csBackoff)
	backoff driver.Backoff
	reopen  bool   // count a reconnect when the reopen succeeds
	cause   string // why the last socket ended, when not a failure (driver.CauseWindowEnd)
	queued  bool   // in loop.ready

	wbuf  []byte        // the request's messages
	out   evloop.Outbox // their unwritten rest
	rbuf  []byte        // received bytes not yet parsed (a partial message)
	anyPK pgconn.FieldDescription

	// the request in flight
	busy     bool
	stale    bool // reported Outstanding at a window's end: its answer is dropped
	seq      uint64
	sent     int64
	op       workload.Op
	keys     []int64
	ki       int    // prepared-one: the key being read
	n        int    // rows of the current statement
	j        int    // any: the row slot being decoded
	affected int64  // update: rows changed
	err      error  // the first decoding or check error
	srvErr   string // the server's ErrorResponse, "SQLSTATE …: …"
}

// open opens c through pgx as Driver.Open does, then takes its socket over.
func (l *loop) open(ctx context.Context, c *lconn) error {
	pc, err := l.d.OpenConn(ctx)
	if err != nil {
		return err
	}
	pc.timer.Stop()
	if (l.d.readSQL != "" && pc.read1 == nil) || (l.d.updateSQL != "" && pc.upd == nil) {
		_ = pc.Close()
		return fmt.Errorf("pg: a statement whose parameter is not an integer (array): %w", driver.ErrNoLoop)
	}
	hc, err := pc.pg.PgConn().Hijack()
	if err != nil {
		_ = pc.Close()
		return fmt.Errorf("pg: take the connection over: %w", err)
	}
	sc, ok := hc.Conn.(syscall.Conn)
	if !ok {
		_ = hc.Conn.Close()
		return fmt.Errorf("pg: a %T connection (TLS): %w", hc.Conn, driver.ErrNoLoop)
	}
	fd := -1
	raw, err := sc.SyscallConn()
	if err == nil {
		err = raw.Control(func(f uintptr) { fd = int(f) })
	}
	c.gen++
	if err == nil {
		err = l.p.Add(fd, unix.EPOLLIN, int32(c.i), int32(c.gen))
	}
	if err != nil {
		_ = hc.Conn.Close()
		return fmt.Errorf("pg: register the socket: %w", err)
	}
	c.c, c.nc, c.fd, c.st, c.pid = pc, hc.Conn, fd, csOpen, hc.PID
	c.busy, c.rbuf = false, c.rbuf[:0]
	c.out.Reset()
	if pc.read1 != nil && l.d.cfg.Path == Any && len(pc.read1.sd.Fields) > 0 {
		c.anyPK = pc.read1.sd.Fields[0]
		c.anyPK.Format = pc.read1.resultFmt[0]
	}
	return nil
}

// drop closes c's socket; its partial state goes with it.
func (l *loop) drop(c *lconn) {
	if c.nc != nil {
		_ = c.nc.Close() // also leaves the epoll set
	}
	c.nc, c.fd, c.st, c.rbuf = nil, -1, csDown, c.rbuf[:0]
	c.out.Reset()
}

// terminate ends an idle session politely (Terminate), then drops c.
func (l *loop) terminate(c *lconn) {
	if c.st == csOpen && !c.busy {
		_, _ = unix.Write(c.fd, []byte{'X', 0, 0, 0, 4})
	}
	l.drop(c)
}

// start begins request seq on c: the workload's keys, then the first
// statement.
func (l *loop) start(c *lconn, seq uint64, now int64) {
	wl := l.d.wl
	op, keys := wl.Keys(seq, c.keys)
	c.keys, c.seq, c.op, c.sent, c.busy = keys, seq, op, now, true
	c.ki, c.n, c.j, c.affected, c.err, c.srvErr = 0, 0, 0, 0, nil, ""
	c.c.bytes = 0
	l.inflight++
	if l.timeout > 0 {
		l.alarm.Set(now + l.timeout)
	}
	var err error
	switch {
	case op == workload.Write:
		if err = c.c.encodeKey(c.c.upd, keys[0]); err == nil {
			l.send(c, c.c.upd)
		}
	case len(keys) == 0:
		err = errUnexpected("no keys: the cold workload has read every row")
	default:
		rows := c.c.rows[:0]
		for range keys {
			rows = append(rows, nil)
		}
		c.c.rows = rows
		if l.d.cfg.Path == Any || l.d.cfg.Path == SQL {
			clear(c.c.byKey)
			c.c.sqlStart()
			err = c.c.encodeRead(keys)
		} else {
			err = c.c.encodeKey(c.c.read1, keys[0])
		}
		if err == nil {
			l.send(c, c.c.read1)
		}
	}
	if err != nil {
		l.finishErr(c, err)
	}
}

// send writes one statement's messages, as pgconn's ExecStatement does:
// Bind (the encoded parameter in binary, the result formats), a Describe
// of the portal when the statement returns no columns, Execute, Sync.
func (l *loop) send(c *lconn, s *stmt) {
	ps := c.c.params
	b := append(c.wbuf[:0], 'B', 0, 0, 0, 0, 0) // unnamed portal
	b = append(b, s.sd.Name...)
	b = append(b, 0, 0, 1, 0, 1) // one format code for all: binary
	b = binary.BigEndian.AppendUint16(b, uint16(len(ps)))
	for _, p := range ps {
		if p == nil {
			b = append(b, 0xff, 0xff, 0xff, 0xff) // NULL
			continue
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(s.resultFmt)))
	for _, f := range s.resultFmt {
		b = binary.BigEndian.AppendUint16(b, uint16(f))
	}
	binary.BigEndian.PutUint32(b[1:], uint32(len(b)-1))
	if len(s.sd.Fields) == 0 {
		b = append(b, 'D', 0, 0, 0, 6, 'P', 0)
	}
	b = append(b, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0, 'S', 0, 0, 0, 4)
	c.wbuf, c.out.Pending = b, b
	l.write(c)
}

// write writes what is left of the request (evloop.Poller.Flush).
func (l *loop) write(c *lconn) {
	if err := l.p.Flush(c.fd, int32(c.i), int32(c.gen), &c.out); err != nil {
		l.fail(c, driver.Error, driver.Msg(err))
	}
}

// event handles what epoll reported for an open c.
func (l *loop) event(c *lconn, ev uint32) {
	if ev&unix.EPOLLOUT != 0 && len(c.out.Pending) > 0 {
		l.write(c)
		if c.st != csOpen {
			return
		}
	}
	if ev&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
		l.read(c)
	}
}

// finishErr ends c's request with err: Unexpected for a response that is
// not the expected one, else Error.
func (l *loop) finishErr(c *lconn, err error) {
	var u *unexpected
	var m *missing
	if errors.As(err, &m) {
		l.finish(c, driver.Miss, "row not found", driver.Now())
		return
	}
	if errors.As(err, &u) {
		l.finish(c, driver.Unexpected, u.msg, driver.Now())
		return
	}
	l.finish(c, driver.Error, shortMsg(err), driver.Now())
}

// finish records c's request and queues c for the next. A stale request
// (outstanding at a window's end) is not recorded again.
func (l *loop) finish(c *lconn, class driver.Class, msg string, now int64) {
	if !c.busy {
		return
	}
	c.busy = false
	l.last = now
	if c.stale {
		c.stale = false
		l.stale--
		if class == driver.OK || class == driver.Miss {
			o := driver.Outcome{Class: driver.Drained, Op: l.d.wl.Index(c.op), Done: now}
			l.w.Record(&o, c.sent)
		}
	} else {
		o := driver.Outcome{Class: class, Op: l.d.wl.Index(c.op), Bytes: c.c.bytes, Done: now, Msg: msg}
		l.inflight--
		l.w.Record(&o, c.sent)
	}
	c.backoff.Reset()
	l.queue(c)
}

// unsolicited handles a message on an idle connection that no request
// asked for: nothing to account it to, so a request is claimed and failed
// with msg (as a failed reopen fails one, and the HTTP driver's loop does
// for unsolicited bytes), and the connection is replaced after a pause.
func (l *loop) unsolicited(c *lconn, msg string, now int64) {
	l.drop(c)
	if !l.stopping {
		if seq, k := l.w.Claim(1); k > 0 {
			o := driver.Outcome{Class: driver.Error, Op: l.d.wl.Index(l.d.wl.Op(seq)), Done: now, Msg: msg}
			l.w.Record(&o, now)
		} else {
			l.stopping = true
		}
	}
	l.pauseConn(c, now)
}

// fail fails c's request in flight, closes c and schedules its reopen
// after a pause.
func (l *loop) fail(c *lconn, class driver.Class, msg string) {
	now := driver.Now()
	if c.busy {
		c.busy = false
		l.last = now
		if c.stale {
			c.stale = false // outstanding at a window's end: not recorded again
			l.stale--
		} else {
			o := driver.Outcome{Class: class, Op: l.d.wl.Index(c.op), Bytes: c.c.bytes, Done: now, Msg: msg}
			l.inflight--
			l.w.Record(&o, c.sent)
		}
	}
	l.drop(c)
	l.pauseConn(c, now)
}
