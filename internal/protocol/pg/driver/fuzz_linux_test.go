//go:build linux

package pg

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/evloop"
	"github.com/benchrig/benchrig/internal/fuzzcheck"
	"github.com/benchrig/benchrig/internal/workload"
)

// fuzzMaxMessage is the message bound the framing fuzz target configures:
// small, so that an input claiming a huge length is refused, and the
// receive buffer (at most about twice a message) stays bounded by
// construction.
const fuzzMaxMessage = 1 << 20

// records keeps what the loop recorded.
type records struct{ out []string }

func (r *records) Claim(int) (uint64, int) { return 0, 0 }
func (r *records) Reconnected(string, int) {}
func (r *records) Record(o *driver.Outcome, _ int64) {
	r.out = append(r.out, fmt.Sprintf("%v %s", o.Class, o.Msg))
}

// frameModel is what the loop must make of data, worked out independently
// of its read: the whole messages, in order, for an update request in
// flight that the first ReadyForQuery ends (after it, any reply but a
// notice, a parameter change or a notification has no request outstanding:
// a framing failure; a message of a type no server sends in answer is one
// at any time); then the framing failure, if any, and the bytes of a
// partial message left over.
func frameModel(data []byte) (out []string, failed string, rest int) {
	busy, srvErr, affected := true, "", int64(0)
	for len(data) >= 5 {
		ml := int(binary.BigEndian.Uint32(data[1:]))
		switch {
		case ml < 4:
			failed = "malformed message from server"
		case int64(ml) > fuzzMaxMessage:
			failed = tooLong(data[0], ml, fuzzMaxMessage)
		}
		if failed != "" {
			if busy {
				out = append(out, fmt.Sprintf("%v %s", driver.Error, failed))
			}
			return out, failed, 0
		}
		if len(data) < 1+ml {
			break
		}
		typ, body := data[0], data[5:1+ml]
		data = data[1+ml:]
		switch typ {
		case 'N', 'S', 'A':
			continue // notices, parameter changes, notifications: any time
		case 'E', 'D', 'C', 'Z', '2', 'n', 'T', 'I', 's':
			if !busy { // a reply with no request outstanding (the test claims none: not recorded)
				return out, "backend message with no request outstanding", 0
			}
		default:
			if busy {
				out = append(out, fmt.Sprintf("%v %s", driver.Error, unknownMessage(typ)))
			}
			return out, unknownMessage(typ), 0
		}
		switch typ {
		case 'C':
			affected = rowsAffected(body)
		case 'E':
			if srvErr == "" {
				srvErr = errorResponse(body)
			}
		case 'Z':
			busy = false
			switch {
			case srvErr != "":
				out = append(out, fmt.Sprintf("%v %s", driver.Error, srvErr))
			case affected != 1:
				out = append(out, fmt.Sprintf("%v update changed %d rows, want 1", driver.Unexpected, affected))
			default:
				out = append(out, fmt.Sprintf("%v ", driver.OK))
			}
		}
	}
	return out, "", len(data)
}

// FuzzLoopFraming feeds arbitrary bytes, in seeded random pieces, through a
// socket to the pg event loop's read (the backend message framing, the
// CommandComplete and ErrorResponse fields, ReadyForQuery) of a connection
// with an update in flight. It must not panic, must record what the model
// (frameModel) says, keep exactly the partial message's bytes, and refuse a
// length past pg.max_message before reading it; the receive buffer stays
// within twice the bound and each input's allocation within the fuzzcheck
// bound.
func FuzzLoopFraming(f *testing.F) {
	fuzzcheck.Limit()
	msg := func(typ byte, body string) string {
		b := []byte{typ, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(b[1:], uint32(4+len(body)))
		return string(b) + body
	}
	f.Add([]byte(msg('C', "UPDATE 1\x00")+msg('Z', "I")), uint64(1))
	f.Add([]byte(msg('D', "\x00\x01\x00\x00\x00\x02{}")+msg('C', "UPDATE 2\x00")+msg('Z', "I")+msg('N', "")), uint64(2))
	f.Add([]byte(msg('E', "SERROR\x00C23505\x00Mduplicate key\x00\x00")+msg('Z', "E")), uint64(3))
	f.Add([]byte("D\x7f\xff\xff\xff"+"aaaa"), uint64(4))
	f.Add([]byte("D\x00\x00\x00\x02"), uint64(5))
	f.Add([]byte(msg('S', "a\x00b\x00")+"C\x00\x00"), uint64(6))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		fuzzcheck.Bound(t, len(data), func() {
			rec := &records{}
			d := &Driver{cfg: Config{MaxMessage: fuzzMaxMessage}, wl: &workload.Workload{}}
			l := &loop{d: d}
			l.W, l.Inflight = rec, 1
			c := &lconn{Conn: evloop.Conn{Fd: fds[0], St: evloop.Open, Inflight: 1}, c: &Conn{}, op: workload.Write}
			rng := rand.New(rand.NewPCG(seed, 0))
			for off := 0; off < len(data) && c.St == evloop.Open; {
				k := min(len(data)-off, 1+rng.IntN(32<<10))
				w, err := unix.Write(fds[1], data[off:off+k])
				if err != nil && err != unix.EAGAIN {
					t.Fatal(err)
				}
				off += max(w, 0)
				for c.St == evloop.Open {
					if n, err := unix.IoctlGetInt(fds[0], unix.SIOCINQ); err != nil || n == 0 {
						break
					}
					l.read(c)
				}
			}
			out, failed, rest := frameModel(data)
			if fmt.Sprint(rec.out) != fmt.Sprint(out) {
				t.Fatalf("recorded %q, the model says %q", rec.out, out)
			}
			if (failed != "") != (c.St != evloop.Open) {
				t.Fatalf("connection state %d, the model's failure %q", c.St, failed)
			}
			if failed == "" && len(c.rbuf) != rest {
				t.Fatalf("kept %d bytes of a partial message, want %d", len(c.rbuf), rest)
			}
			if cap(c.rbuf) > 2*(fuzzMaxMessage+5)+16384 {
				t.Fatalf("receive buffer of %d bytes, over twice the message bound", cap(c.rbuf))
			}
		})
	})
}
