package pgtest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"time"
)

// readStartup reads one length-prefixed startup packet (no type byte).
func readStartup(r *bufio.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n < 8 || n > 1<<16 {
		return nil, errors.New("bad startup packet")
	}
	pkt := make([]byte, n)
	copy(pkt, hdr[:])
	if _, err := io.ReadFull(r, pkt[4:]); err != nil {
		return nil, err
	}
	return pkt, nil
}

// forwardCancel passes a CancelRequest to the real server.
func (p *Proxy) forwardCancel(pkt []byte) {
	uc, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		return
	}
	defer uc.Close()
	_, _ = uc.Write(pkt)
	_ = uc.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.Copy(io.Discard, uc)
}

// readMsg reads one typed message: its type, and the whole message
// (header included) in buf's storage.
func readMsg(r *bufio.Reader, buf []byte) ([]byte, error) {
	hdr, err := r.Peek(5)
	if err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(hdr[1:]))
	if n < 4 || n > 1<<30 {
		return nil, fmt.Errorf("bad message length %d", n)
	}
	if cap(buf) < 1+n {
		buf = make([]byte, 1+n)
	}
	buf = buf[:1+n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// clientPump relays the client's messages to the real server, counting
// the executions of benchrig's statements.
func (p *Proxy) clientPump(cr *bufio.Reader, uc net.Conn) {
	w := bufio.NewWriterSize(uc, 64<<10)
	var buf []byte
	for {
		m, err := readMsg(cr, buf)
		if err != nil {
			return
		}
		buf = m
		if m[0] == 'B' {
			// Bind: portal name, then statement name.
			body := m[5:]
			if i := indexZero(body); i >= 0 {
				stmt := body[i+1:]
				if strings.HasPrefix(string(stmt[:max(0, indexZero(stmt))]), "benchrig_") {
					if p.execs.Add(1) > p.opts.After && p.b.MidRun() {
						p.triggered.Store(true)
					}
				}
			}
		}
		if _, err := w.Write(m); err != nil {
			return
		}
		if cr.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

func indexZero(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// serverPump relays the real server's messages to the client, misbehaving
// as p's behaviour says.
func (p *Proxy) serverPump(ur *bufio.Reader, cc net.Conn, cr *bufio.Reader) {
	w := bufio.NewWriterSize(cc, 64<<10)
	rng := rand.New(rand.NewPCG(uint64(p.pumps.Add(1)), 7)) // Fragment's cuts
	var buf []byte
	authed := false
	injected := false
	silent := false // relay nothing more, but keep reading
	for {
		m, err := readMsg(ur, buf)
		if err != nil {
			_ = w.Flush()
			return
		}
		buf = m
		if silent {
			continue
		}
		if p.midRunNow() {
			switch p.b {
			case MidRunStall:
				_ = w.Flush()
				silent = true
				continue
			case MidRunGarbage:
				_, _ = w.Write(garbage())
				_ = w.Flush()
				silent = true
				continue
			case MidRunNoticeFlood:
				p.flood(w)
				return
			case HugeRow:
				p.huge(w, 'D')
				silent = true
				continue
			case MidRunClose:
				_ = w.Flush()
				return
			case BadMessageType:
				if !injected {
					injected = true
					_, _ = w.Write([]byte{'q', 0, 0, 0, 9, 'b', 'o', 'g', 'u', 's'})
				}
			case DoubleReply:
				if _, err := w.Write(m); err != nil {
					return
				}
			case Fragment:
				if err := w.Flush(); err != nil {
					return
				}
				if !fragment(cc, m, rng) {
					return
				}
				if len(m) > 1 {
					p.Fragmented.Add(1)
				}
				continue
			case SlowDrip:
				if err := w.Flush(); err != nil {
					return
				}
				for _, c := range m {
					if _, err := cc.Write([]byte{c}); err != nil {
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
				continue
			}
		}
		if _, err := w.Write(m); err != nil {
			return
		}
		if !authed && m[0] == 'R' && len(m) >= 9 && binary.BigEndian.Uint32(m[5:9]) == 0 {
			authed = true
			switch p.b {
			case AuthOKThenSilent:
				_ = w.Flush()
				silent = true
				continue
			case NoticeFlood:
				p.flood(w)
				return
			case HugeParameter:
				p.huge(w, 'S')
				silent = true
				continue
			case CloseAfterAuth:
				_ = w.Flush()
				return
			}
		}
		if ur.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

// garbage is 4 KiB of random bytes.
func garbage() []byte {
	b := make([]byte, 4096)
	r := rand.New(rand.NewPCG(26, 4))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// notice is one NoticeResponse.
var notice = func() []byte {
	body := []byte("SNOTICE\x00VNOTICE\x00C00000\x00Mflood\x00\x00")
	m := []byte{'N', 0, 0, 0, 0}
	binary.BigEndian.PutUint32(m[1:], uint32(4+len(body)))
	return append(m, body...)
}()

// flood writes NoticeResponses until a write fails.
func (p *Proxy) flood(w *bufio.Writer) {
	block := make([]byte, 0, 64<<10)
	for len(block)+len(notice) <= cap(block) {
		block = append(block, notice...)
	}
	for {
		if _, err := w.Write(block); err != nil {
			return
		}
		if err := w.Flush(); err != nil {
			return
		}
	}
}

// hugeLen is the length the huge messages claim: 1 GiB.
const hugeLen = 1 << 30

// huge writes a message of type typ claiming 1 GiB, then its body, 1 MiB
// at a time, until the client stops reading or the body is whole.
func (p *Proxy) huge(w *bufio.Writer, typ byte) {
	hdr := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(hdr[1:], hugeLen)
	body := hugeLen - 4
	if typ == 'D' {
		// one column, its value the rest
		hdr = append(hdr, 0, 1, 0, 0, 0, 0)
		binary.BigEndian.PutUint32(hdr[7:], uint32(body-6))
		body -= 6
	}
	if _, err := w.Write(hdr); err != nil {
		return
	}
	if err := w.Flush(); err != nil {
		return
	}
	chunk := make([]byte, 1<<20)
	if typ == 'S' {
		for i := range chunk {
			chunk[i] = 'x'
		}
	}
	for body > 0 {
		n := min(body, len(chunk))
		k, err := w.Write(chunk[:n])
		p.HugeBytes.Add(int64(k))
		if err != nil {
			return
		}
		if err := w.Flush(); err != nil {
			return
		}
		body -= n
	}
}

// fragment writes m in three pieces, each its own write a few
// microseconds after the last: the first cut falls in its first 11 bytes
// (the type, the length, a row's column count or first value length), the
// second anywhere after it, so that the client's reads end in headers,
// lengths and values. false when a write failed.
func fragment(cc net.Conn, m []byte, rng *rand.Rand) bool {
	for pieces := 0; len(m) > 0; pieces++ {
		k := len(m)
		switch {
		case pieces == 0:
			k = min(k, 1+rng.IntN(11))
		case pieces == 1 && k > 1:
			k = 1 + rng.IntN(k-1)
		}
		if _, err := cc.Write(m[:k]); err != nil {
			return false
		}
		m = m[k:]
		time.Sleep(20 * time.Microsecond)
	}
	return true
}
