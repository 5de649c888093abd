//go:build linux

package pg

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
	"github.com/benchrig/benchrig/internal/workload"
)

// read reads what arrived on c and handles every whole message in it.
func (l *loop) read(c *lconn) {
	c.room(4096)
	m := len(c.rbuf)
	n, err := evloop.ReadNonblock(c.Fd, c.rbuf[m:cap(c.rbuf)])
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
	l.handle(c, c.rbuf[:m+n], driver.Now())
}

// room makes room in c's buffer for at least n more bytes, and for the
// rest of the message begun in it.
func (c *lconn) room(n int) {
	if len(c.rbuf) >= 5 {
		// The length was checked against the limit when it arrived.
		n = max(n, 1+int(binary.BigEndian.Uint32(c.rbuf[1:]))-len(c.rbuf))
	}
	if cap(c.rbuf)-len(c.rbuf) < n {
		nb := make([]byte, len(c.rbuf), max(2*cap(c.rbuf), len(c.rbuf)+n, 16384))
		copy(nb, c.rbuf)
		c.rbuf = nb
	}
}

// Feed implements evloop.Feeder: the bytes b that arrived on c on the
// loop's ring, appended to c's buffer and handled as read handles what it
// reads (empty b: the server closed c).
func (l *loop) Feed(ec *evloop.Conn, b []byte) {
	c := l.conns[ec.I]
	if len(b) == 0 {
		l.fail(c, driver.Error, "connection closed by server")
		return
	}
	c.room(len(b))
	m := len(c.rbuf)
	l.handle(c, c.rbuf[:m+copy(c.rbuf[m:cap(c.rbuf)], b)], driver.Now())
}

// ReadFailed implements evloop.Feeder: an error receiving on c.
func (l *loop) ReadFailed(ec *evloop.Conn, err error) {
	l.fail(l.conns[ec.I], driver.Error, driver.Msg(err))
}

// handle handles every whole message in b (c's buffer: what was left,
// then what arrived) and keeps the rest.
func (l *loop) handle(c *lconn, b []byte, now int64) {
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
		if c.Inflight == 0 {
			// A FATAL error on an idle connection (the server shutting
			// down, an idle-session timeout): it closes next.
			l.unsolicited(c, errorResponse(body), now)
			return false
		}
	case 'D', 'C', 'Z', '2', 'n', 'T', 'I', 's':
		if c.Inflight == 0 {
			l.unsolicited(c, "backend message with no request outstanding", now)
			return false
		}
	default:
		if c.Inflight == 0 {
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
			c.c.idx.place(c.c.rows, pk, v)
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
	case Any: // each row was placed as it came
	default:
		if c.n > 1 {
			l.finishErr(c, errUnexpected("%d rows for one key: is the key column unique?", c.n))
			return
		}
		if c.ki++; c.ki < len(c.keys) {
			c.n = 0
			if err := l.sendKeys(c, &c.binds[0], c.c.read1, c.keys[c.ki:c.ki+1], false); err != nil {
				l.finishErr(c, err)
			}
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
