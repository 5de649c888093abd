// Package pgtest is a hostile PostgreSQL for tests: a proxy in front of a
// real server (an ephemeral one, in tests) that relays the protocol
// faithfully until it misbehaves in one named way (Behaviour). A client
// that is bounded and truthful against it fails within its deadlines and
// says why; one that is not hangs, or buffers what it was sent.
//
// The behaviours at connect (auth-ok-then-silent, notice-flood,
// 1g-parameter, unsupported-auth, close-after-auth, never-reply) hit the
// first connection a client opens. The mid-run behaviours start once the
// proxy has relayed Options.After executions of benchrig's prepared
// statements (a Bind naming "benchrig_read" or "benchrig_update", over all
// connections): from then on every connection, the ones already open and
// every new one (control and statistics connections too), meets the
// behaviour at the next message the server sends it.
//
// Example:
//
//	p, err := pgtest.Start(srv.DSN(), pgtest.MidRunStall, pgtest.Options{After: 20})
//	if err != nil {
//		return err
//	}
//	defer p.Close()
//	dsn := p.DSN() // srv.DSN() with the proxy's address
package pgtest

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Behaviour is one way the proxy misbehaves.
type Behaviour string

// The behaviours. At connect: the startup of every connection.
const (
	// Relay relays everything: a well-behaved server (the control).
	Relay Behaviour = "relay"
	// NeverReply accepts connections and never sends a byte (not even
	// the answer to an SSLRequest).
	NeverReply Behaviour = "never-reply"
	// AuthOKThenSilent relays the startup up to AuthenticationOk, then
	// sends nothing more (no ReadyForQuery).
	AuthOKThenSilent Behaviour = "auth-ok-then-silent"
	// NoticeFlood sends NoticeResponses without end after
	// AuthenticationOk, never ReadyForQuery.
	NoticeFlood Behaviour = "notice-flood"
	// HugeParameter sends, after AuthenticationOk, a ParameterStatus
	// whose header claims 1 GiB, then streams its body as long as the
	// client reads (up to 1 GiB).
	HugeParameter Behaviour = "1g-parameter"
	// UnsupportedAuth answers the startup message with an
	// authentication request of an unknown method (code 99).
	UnsupportedAuth Behaviour = "unsupported-auth"
	// CloseAfterAuth closes the connection after AuthenticationOk.
	CloseAfterAuth Behaviour = "close-after-auth"
)

// The mid-run behaviours: from the trigger on (Options.After).
const (
	// MidRunStall sends nothing more on any connection.
	MidRunStall Behaviour = "mid-run-stall"
	// MidRunGarbage sends 4 KiB of random bytes in place of the next
	// message, then nothing.
	MidRunGarbage Behaviour = "mid-run-garbage"
	// BadMessageType puts a message of a type no PostgreSQL server sends
	// ('q') before every message it relays.
	BadMessageType Behaviour = "bad-message-type"
	// MidRunNoticeFlood sends NoticeResponses without end in place of
	// the next message.
	MidRunNoticeFlood Behaviour = "mid-run-notice-flood"
	// SlowDrip relays one byte every 100 ms: every read makes progress,
	// no reply is ever whole in time.
	SlowDrip Behaviour = "slow-drip"
	// DoubleReply sends every message twice.
	DoubleReply Behaviour = "double-reply"
	// HugeRow sends, in place of the next message, a DataRow whose header
	// claims 1 GiB, then streams its body as long as the client reads.
	HugeRow Behaviour = "1g-row"
	// MidRunClose closes every connection at its next message.
	MidRunClose Behaviour = "mid-run-close"
	// Fragment relays every message whole but in three pieces, each its
	// own write, the first cut in the message's first 11 bytes: nothing
	// is wrong with it (TCP may cut a stream anywhere), and a client must
	// read every reply as if it came at once. Not in Behaviours, which
	// all must fail.
	Fragment Behaviour = "fragment"
)

// Behaviours lists every behaviour but Relay, in the order above.
var Behaviours = []Behaviour{
	NeverReply, AuthOKThenSilent, NoticeFlood, HugeParameter, UnsupportedAuth, CloseAfterAuth,
	MidRunStall, MidRunGarbage, BadMessageType, MidRunNoticeFlood, SlowDrip, DoubleReply, HugeRow, MidRunClose,
}

// MidRun reports whether b starts at the trigger (Options.After) rather
// than at connect.
func (b Behaviour) MidRun() bool {
	switch b {
	case MidRunStall, MidRunGarbage, BadMessageType, MidRunNoticeFlood, SlowDrip, DoubleReply, HugeRow, MidRunClose, Fragment:
		return true
	}
	return false
}

// Options tune a proxy.
type Options struct {
	// After is how many executions of benchrig's statements the proxy
	// relays before a mid-run behaviour starts (0: from the first).
	After int64
}

// Proxy is a running hostile proxy.
type Proxy struct {
	b        Behaviour
	opts     Options
	upstream string // host:port of the real server
	dsn      string // the real server's DSN, host:port replaced
	ln       net.Listener

	execs     atomic.Int64 // executions of benchrig's statements seen
	triggered atomic.Bool
	pumps     atomic.Uint64 // connections relayed: each one's Fragment seed
	// HugeBytes counts the bytes of 1 GiB messages the proxy got written
	// (the client read them): a bounded client stops it at its cap.
	HugeBytes atomic.Int64
	// Fragmented counts the messages Fragment relayed in more than one
	// write.
	Fragmented atomic.Int64

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Start starts a proxy on 127.0.0.1 in front of the server of dsn (a URL
// DSN reaching it over TCP, as an ephemeral server's does).
func Start(dsn string, b Behaviour, opts Options) (*Proxy, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("pgtest: %q is not a URL DSN with a host", dsn)
	}
	if b != Relay && b != Fragment && !known(b) {
		return nil, fmt.Errorf("pgtest: unknown behaviour %q", b)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{b: b, opts: opts, upstream: u.Host, ln: ln, conns: map[net.Conn]struct{}{}}
	u.Host = ln.Addr().String()
	p.dsn = u.String()
	if b.MidRun() && opts.After <= 0 {
		p.triggered.Store(true)
	}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func known(b Behaviour) bool {
	for _, k := range Behaviours {
		if k == b {
			return true
		}
	}
	return false
}

// DSN is the real server's DSN with the proxy's address.
func (p *Proxy) DSN() string { return p.dsn }

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Behaviour is the proxy's behaviour.
func (p *Proxy) Behaviour() Behaviour { return p.b }

// Triggered reports whether the mid-run behaviour has started.
func (p *Proxy) Triggered() bool { return p.triggered.Load() }

// Close stops accepting, closes every connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

// track registers c to be closed by Close; false when the proxy is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.untrack(c)
			p.serve(c)
		}()
	}
}

// Protocol codes of the startup packets.
const (
	sslRequest    = 80877103
	gssEncRequest = 80877104
	cancelRequest = 80877102
)

// serve handles one client connection.
func (p *Proxy) serve(cc net.Conn) {
	if p.b == NeverReply {
		_, _ = io.Copy(io.Discard, cc)
		return
	}
	cr := bufio.NewReaderSize(cc, 64<<10)
	var startup []byte
	for {
		pkt, err := readStartup(cr)
		if err != nil {
			return
		}
		code := binary.BigEndian.Uint32(pkt[4:])
		switch code {
		case sslRequest, gssEncRequest:
			if p.midRunNow() {
				p.misbehaveIdle(cc, cr)
				return
			}
			if _, err := cc.Write([]byte{'N'}); err != nil {
				return
			}
			continue
		case cancelRequest:
			p.forwardCancel(pkt)
			return
		}
		startup = pkt
		break
	}
	if p.b == UnsupportedAuth {
		_, _ = cc.Write([]byte{'R', 0, 0, 0, 8, 0, 0, 0, 99})
		_, _ = io.Copy(io.Discard, cr)
		return
	}
	uc, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		return
	}
	if !p.track(uc) {
		return
	}
	defer p.untrack(uc)
	if _, err := uc.Write(startup); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.clientPump(cr, uc)
		_ = uc.Close()
	}()
	p.serverPump(bufio.NewReaderSize(uc, 64<<10), cc, cr)
	_ = cc.Close()
	_ = uc.Close()
	<-done
}

// midRunNow reports whether a mid-run behaviour is in force.
func (p *Proxy) midRunNow() bool { return p.b.MidRun() && p.triggered.Load() }

// misbehaveIdle is a mid-run behaviour met before any upstream exists:
// the answer to an SSLRequest.
func (p *Proxy) misbehaveIdle(cc net.Conn, cr *bufio.Reader) {
	w := bufio.NewWriter(cc)
	switch p.b {
	case MidRunClose:
		return
	case MidRunGarbage:
		_, _ = w.Write(garbage())
	case MidRunNoticeFlood:
		p.flood(w)
		return
	case HugeRow:
		p.huge(w, 'D')
	case BadMessageType, DoubleReply, SlowDrip:
		// the SSLRequest's answer is one byte, not a message
		_, _ = w.Write([]byte{'N'})
		_ = w.Flush()
		return
	}
	_ = w.Flush()
	_, _ = io.Copy(io.Discard, cr)
}

// String names the proxy for test logs.
func (p *Proxy) String() string {
	return string(p.b) + "@" + p.Addr() + " after " + strconv.FormatInt(p.opts.After, 10)
}
