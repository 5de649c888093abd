//go:build linux

package pg

import (
	"context"
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

// lconn is one connection of a loop: a Conn whose statements, parameter
// encoders, row decoder and row buffers the loop reuses, and its socket,
// taken over from pgx.
type lconn struct {
	evloop.Conn // Inflight is 1 while a request is in flight
	c           *Conn
	nc          net.Conn // the hijacked socket, kept referenced until closed
	pid         uint32   // the backend's process ID

	wbuf  []byte      // a simple query's message
	binds [2]bindTmpl // the last request of the read and update statements
	rbuf  []byte      // received bytes not yet parsed (a partial message)
	anyPK pgconn.FieldDescription

	// the request in flight
	seq      uint64
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
	// pgconn may still hold bytes it read ahead, or a background reader
	// (started by a write that took over 15 ms, as on a loaded machine)
	// may have a read in progress that would take the next reply off the
	// socket: SyncConn drains and stops both, as pgconn asks before a
	// Hijack.
	if err := pc.pg.PgConn().SyncConn(ctx); err != nil {
		_ = pc.Close()
		return fmt.Errorf("pg: take the connection over: %w", err)
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
	c.Gen++
	if err == nil {
		err = l.P.Add(fd, unix.EPOLLIN, int32(c.I), int32(c.Gen))
	}
	if err != nil {
		_ = hc.Conn.Close()
		return fmt.Errorf("pg: register the socket: %w", err)
	}
	c.c, c.nc, c.Fd, c.St, c.pid = pc, hc.Conn, fd, evloop.Open, hc.PID
	c.Inflight, c.rbuf = 0, c.rbuf[:0]
	c.Out.Reset()
	if pc.read1 != nil && l.d.cfg.Path == Any && len(pc.read1.sd.Fields) > 0 {
		c.anyPK = pc.read1.sd.Fields[0]
		c.anyPK.Format = pc.read1.resultFmt[0]
	}
	return nil
}

// drop closes c's socket; its partial state goes with it.
func (l *loop) drop(c *lconn) {
	if c.nc != nil {
		l.P.CancelSocket(c.Fd) // on a ring, its requests first
		_ = c.nc.Close()       // also leaves the epoll set
	}
	c.nc, c.Fd, c.St, c.rbuf = nil, -1, evloop.Down, c.rbuf[:0]
	c.Out.Reset()
}

// terminate ends an idle session politely (Terminate), then drops c.
func (l *loop) terminate(c *lconn) {
	if c.St == evloop.Open && c.Inflight == 0 {
		_, _ = unix.Write(c.Fd, []byte{'X', 0, 0, 0, 4})
	}
	l.drop(c)
}

// start begins request seq on c: the workload's keys, then the first
// statement.
func (l *loop) start(c *lconn, seq uint64, now int64) {
	wl := l.d.wl
	op, keys := wl.Keys(seq, c.keys)
	c.keys, c.seq, c.op, c.Sent, c.Inflight = keys, seq, op, now, 1
	c.ki, c.n, c.j, c.affected, c.err, c.srvErr = 0, 0, 0, 0, nil, ""
	c.c.bytes = 0
	c.c.dec.reset()
	l.Inflight++
	var err error
	switch {
	case op == workload.Write:
		err = l.sendKeys(c, &c.binds[1], c.c.upd, keys[:1], false)
	case len(keys) == 0:
		err = errUnexpected("no keys: the cold workload has read every row")
	default:
		rows := c.c.rows[:0]
		for range keys {
			rows = append(rows, nil)
		}
		c.c.rows = rows
		if l.d.cfg.Path == Any || l.d.cfg.Path == SQL {
			c.c.idx.build(keys)
			c.c.sqlStart()
			err = l.sendKeys(c, &c.binds[0], c.c.read1, keys, c.c.arrayParam())
		} else {
			err = l.sendKeys(c, &c.binds[0], c.c.read1, keys[:1], false)
		}
	}
	if err != nil {
		l.finishErr(c, err)
	}
}

// write writes what is left of the request (evloop.Loop.Write; an error
// fails it).
func (l *loop) write(c *lconn) { l.Write(&c.Conn) }

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
	if c.Inflight == 0 {
		return
	}
	if !l.account(c, class, msg, now) && (class == driver.OK || class == driver.Miss) {
		l.record(driver.Outcome{Class: driver.Drained, Op: l.d.wl.Index(c.op), Done: now}, c.Sent)
	}
	c.Backoff.Reset()
	l.Queue(&c.Conn)
}

// account takes c's request, ended at now, off the loop and records it,
// unless it was stale (evloop.Loop.Answered): false then.
func (l *loop) account(c *lconn, class driver.Class, msg string, now int64) bool {
	l.last = now
	if !l.Answered(&c.Conn) {
		return false
	}
	l.record(driver.Outcome{Class: class, Op: l.d.wl.Index(c.op), Bytes: c.c.bytes, Done: now, Msg: msg}, c.Sent)
	return true
}

// unsolicited handles a message on an idle connection that no request
// asked for: nothing to account it to, so a request is claimed and failed
// with msg (as a failed reopen fails one, and the HTTP driver's loop does
// for unsolicited bytes), and the connection is replaced after a pause.
func (l *loop) unsolicited(c *lconn, msg string, now int64) {
	l.drop(c)
	if !l.Stopping {
		if seq, k := l.W.Claim(1); k > 0 {
			l.record(driver.Outcome{Class: driver.Error, Op: l.d.wl.Index(l.d.wl.Op(seq)), Done: now, Msg: msg}, now)
		} else {
			l.Stopping = true
		}
	}
	l.Pause(&c.Conn, now)
}

// fail fails c's request in flight, closes c and schedules its reopen
// after a pause.
func (l *loop) fail(c *lconn, class driver.Class, msg string) {
	now := driver.Now()
	if c.Inflight > 0 {
		l.account(c, class, msg, now) // stale: not recorded again
	}
	l.drop(c)
	l.Pause(&c.Conn, now)
}
