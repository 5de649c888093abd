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

// read reads what arrived on c and handles every whole message in it.
func (l *loop) read(c *lconn) {
	need := 4096
	if len(c.rbuf) >= 5 {
		// The length was checked against the limit when it arrived.
		need = max(need, 1+int(binary.BigEndian.Uint32(c.rbuf[1:]))-len(c.rbuf))
	}
	if cap(c.rbuf)-len(c.rbuf) < need {
		nb := make([]byte, len(c.rbuf), max(2*cap(c.rbuf), len(c.rbuf)+need, 16384))
		copy(nb, c.rbuf)
		c.rbuf = nb
	}
	m := len(c.rbuf)
	n, err := evloop.ReadNonblock(c.fd, c.rbuf[m:cap(c.rbuf)])
	if err != nil {
		if err != unix.EAGAIN {
			l.fail(c, driver.Error, driver.Msg(err))
		}
		return
	}
	if n == 0 {
		l.fail(c, driver.Error, "connection closed by server")
		return
	}
	now := driver.Now()
	b := c.rbuf[:m+n]
	off := 0
	for len(b)-off >= 5 {
		ml := int(binary.BigEndian.Uint32(b[off+1:]))
		if ml < 4 {
			l.fail(c, driver.Error, "malformed message from server")
			return
		}
		if int64(ml) > l.d.cfg.MaxMessage {
			l.fail(c, driver.Error, tooLong(b[off], ml, l.d.cfg.MaxMessage))
			return
		}
		if len(b)-off < 1+ml {
			break
		}
		typ, body := b[off], b[off+5:off+1+ml]
		off += 1 + ml
		if !l.message(c, typ, body, now) {
			return
		}
	}
	c.rbuf = b[:copy(b, b[off:])]
}

// message handles one backend message; false when c was closed. A
// message no PostgreSQL server sends in answer to a Bind, Execute and
// Sync, or a reply while no request is outstanding, is a framing error:
// the connection fails (its stream can no longer be trusted to line up
// with the requests).
func (l *loop) message(c *lconn, typ byte, body []byte, now int64) bool {
	switch typ {
	case 'N', 'S', 'A':
		return true // notices, parameter changes, notifications: any time
	case 'E':
		if !c.busy {
			// A FATAL error on an idle connection (the server shutting
			// down, an idle-session timeout): it closes next.
			l.unsolicited(c, errorResponse(body), now)
			return false
		}
	case 'D', 'C', 'Z', '2', 'n', 'T', 'I', 's':
		if !c.busy {
			l.unsolicited(c, "backend message with no request outstanding", now)
			return false
		}
	default:
		if !c.busy {
			l.unsolicited(c, unknownMessage(typ), now)
		} else {
			l.fail(c, driver.Error, unknownMessage(typ))
		}
		return false
	}
	switch typ {
	case 'D':
		if !l.dataRow(c, body) {
			l.fail(c, driver.Error, "malformed message from server")
			return false
		}
	case 'C':
		if c.op == workload.Write {
			c.affected = rowsAffected(body)
		}
	case 'E':
		if c.srvErr == "" {
			c.srvErr = errorResponse(body)
		}
	case 'Z':
		l.readyForQuery(c, now)
	}
	return true
}

// dataRow handles one row of a read, as the blocking hot path does; false
// when the message is malformed.
func (l *loop) dataRow(c *lconn, body []byte) bool {
	if c.op == workload.Write {
		return true // a RETURNING clause: rows are not looked at
	}
	var vals [2][]byte
	if len(body) < 2 {
		return false
	}
	ncols := int(binary.BigEndian.Uint16(body))
	p := 2
	for i := 0; i < ncols; i++ {
		if len(body)-p < 4 {
			return false
		}
		n := int(int32(binary.BigEndian.Uint32(body[p:])))
		p += 4
		var v []byte
		if n >= 0 {
			if len(body)-p < n {
				return false
			}
			v = body[p : p+n : p+n]
			p += n
		}
		if i < len(vals) {
			vals[i] = v
		}
	}
	if l.d.cfg.Path == SQL {
		if c.err != nil {
			return true
		}
		s := c.c.read1
		if ncols != 1 || len(s.sd.Fields) != 1 {
			c.err = errUnexpected("sql path returned %d columns, want 1", ncols)
			return true
		}
		c.err = c.c.sqlRow(vals[0], &s.sd.Fields[0], s.resultFmt[0], len(c.keys))
		return true
	}
	if l.d.cfg.Path == Any {
		if c.err != nil {
			return true
		}
		if ncols != 2 {
			c.err = errUnexpected("read statement returned %d columns, want 2", ncols)
			return true
		}
		pk, ok := intValue(vals[0], c.anyPK)
		if !ok {
			c.err = errUnexpected("primary key is not an integer")
			return true
		}
		c.c.bytes += int64(len(vals[0]) + len(vals[1]))
		var v any
		if v, c.err = c.c.decodeFast(vals[1], c.j); c.err == nil {
			c.c.byKey[pk] = v
			c.j++
		}
		return true
	}
	if c.n++; c.n > 1 || c.err != nil {
		return true
	}
	if ncols != 1 {
		c.err = errUnexpected("read statement returned %d columns, want 1", ncols)
		return true
	}
	c.c.bytes += int64(len(vals[0]))
	c.c.rows[c.ki], c.err = c.c.decodeFast(vals[0], c.ki)
	return true
}

// readyForQuery ends a statement: the next key of a prepared-one read, or
// the request's outcome.
func (l *loop) readyForQuery(c *lconn, now int64) {
	if c.srvErr != "" {
		l.finish(c, driver.Error, c.srvErr, now)
		return
	}
	if c.err != nil {
		l.finishErr(c, c.err)
		return
	}
	if c.op == workload.Write {
		if c.affected != 1 {
			l.finishErr(c, errUnexpected("update changed %d rows, want 1", c.affected))
			return
		}
		l.finish(c, driver.OK, "", now)
		return
	}
	switch l.d.cfg.Path {
	case SQL:
		if err := c.c.sqlEnd(len(c.keys)); err != nil {
			l.finishErr(c, err)
			return
		}
	case Any:
		for i, k := range c.keys {
			c.c.rows[i] = c.c.byKey[k]
		}
	default:
		if c.n > 1 {
			l.finishErr(c, errUnexpected("%d rows for one key: is the key column unique?", c.n))
			return
		}
		if c.ki++; c.ki < len(c.keys) {
			c.n = 0
			if err := c.c.encodeKey(c.c.read1, c.keys[c.ki]); err != nil {
				l.finishErr(c, err)
				return
			}
			l.send(c, c.c.read1)
			return
		}
	}
	if err := c.c.checkFound(c.keys); err != nil {
		l.finishErr(c, err)
		return
	}
	if l.onRows != nil {
		l.onRows(c.seq, c.c.rows[:len(c.keys)])
	}
	l.finish(c, driver.OK, "", now)
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
